"""Probing an MCP client: ``mcp-sansio probe --client -- COMMAND ...`` and
:func:`run_client_probe`.

The probe plays the client's server, in the initialize era. For each check it starts the
client anew (:class:`~mcp_sansio.testing.ClientTarget`: the server command the client is
given is a relay to the probe), waits for its ``initialize``, answers it (the version the
client asked for, with every server capability declared), waits for
``notifications/initialized`` and a ``ping`` answered, and then, while the client waits
for the answer to its first request (held unanswered on purpose), sends one near-miss of
:func:`~mcp_sansio.testing.client_shot_builders` and judges the client's answer: the error
the rule wants with the right id, or nothing at all, and the client still answering
afterwards. One more check answers ``initialize`` with a version the client did not ask
for (``1999-01-01``): the client must not go on with the session.

Everything the client sends is judged by our own :class:`~mcp_sansio.Connection` in the
server role, as in the server probe; the rules the client breaks as a sender come out under
their names. Then a fuzz phase: :class:`~mcp_sansio.testing.PeerMachine` with a client
peer (``ping`` and ``roots/list`` as legal traffic, the near misses with hypothesis's
variations, cancellations), seeded. The report has the same rows as the server probe's.

The clients probed: a command that starts its server as a subprocess over stdio
(:class:`~mcp_sansio.testing.ClientTarget`), or our own asyncio client in this process
(:class:`~mcp_sansio.testing.ClientConnectionTarget`). The client must keep its session
open while it waits for an answer (a client that sends nothing after
``notifications/initialized`` is probed all the same: the probe does not need its
requests).
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any, Final, TextIO

import orjson

from mcp_sansio._state import Role
from mcp_sansio._versions import ALL_VERSIONS
from mcp_sansio.testing._conversation import Conversation
from mcp_sansio.testing._report import (
    Outcome,
    Report,
    passive_outcomes,
    report_rows,
    unopened_notes,
)
from mcp_sansio.testing._rules import RULES
from mcp_sansio.testing._runner import (
    DEFAULT_EXAMPLES,
    DEFAULT_JOBS,
    Check,
    CheckFn,
    Probe,
    Progress,
    fuzz_phase,
    oversized_check,
    shot_check,
    split_eras,
)
from mcp_sansio.testing._shots import client_shot_builders
from mcp_sansio.testing._targets import Target
from mcp_sansio.testing._wire import DEFAULT_STARTUP, DEFAULT_TIMEOUT

__all__ = ["UNSUPPORTED_VERSION", "run_client_probe"]

#: The version the probe answers ``initialize`` with to see a client give up.
UNSUPPORTED_VERSION: Final = "1999-01-01"

_LEGACY: Final = split_eras(ALL_VERSIONS)[0]


class _ClientProbe(Probe):
    peer = Role.CLIENT

    def __init__(
        self,
        target: Target,
        *,
        timeout: float,
        startup: float,
        jobs: int,
        progress: Progress,
    ) -> None:
        super().__init__(
            target, versions=_LEGACY, timeout=timeout, startup=startup, jobs=jobs, progress=progress
        )

    def versions_phase(self) -> list[Outcome]:
        return self.run([(_LEGACY[0], self._hello)], "session")

    def _hello(self, check: Check) -> None:
        with check.talk() as conv:
            opened = conv.open_session()
            if conv.requested is not None:
                self.answers["initialize"] = f"asked for {conv.requested}, got {conv.version}" + (
                    "" if opened else f" ({conv.dead or 'no session'})"
                )
            if not opened and not conv.heard and not conv.cut:
                self.gave_up = (
                    "sent nothing within "
                    f"{max(self.timeout, self.startup):g} s of starting (the startup bound, "
                    "--startup)"
                )
            if opened:
                self.offered = [conv.version]
                self.caps[conv.version] = dict(conv.client_capabilities or {})
                info = conv.client_info
                if isinstance(info, dict):
                    name = f"{info.get('name')} {info.get('version')}"
                    self.answers["clientInfo"] = name
                self.answers["capabilities"] = ", ".join(sorted(conv.client_capabilities or {}))
        if not opened:
            self.trials.append(("the session", self._why_closed(conv), tuple(conv.lines)))

    def _why_closed(self, conv: Conversation) -> str:
        """Why a client opened no session."""
        why = conv.dead or "no session"
        if conv.cut:
            why = conv.cut
        elif refused := [v for v in conv.violations if v.rule != "response.missing"]:
            why += f"; what it sent was refused: {refused[0].message}"
        said = conv.channel.stderr.strip()[-300:]
        if said:
            why += f"; its output ends: {said!r}"
        return why

    def plan(self) -> list[tuple[str, CheckFn]]:
        version = self.offered[0]
        checks: list[tuple[str, CheckFn]] = []
        for name, builder in client_shot_builders().items():
            rule_ = RULES.get(name)
            if rule_ is not None and not rule_.applies(version, Role.CLIENT):
                continue
            checks.append((version, shot_check(name, builder, _CAPABILITIES.get(name))))
        checks.append((version, oversized_check))
        checks.append((version, self._unsupported_version))
        return checks

    def _unsupported_version(self, check: Check) -> None:
        name = "lifecycle.unsupported-version-result"
        wait = max(self.timeout, 5.0)
        with check.talk(answer_version=UNSUPPORTED_VERSION) as conv:
            closed = conv.wait_closed(max(wait, self.startup))
            went_on = _after_answer(conv)
            asked = conv.requested
            if asked is None:
                check.not_applicable(name, "the client sent no initialize")
            elif went_on:
                check.failed(
                    name,
                    f"initialize answered with {UNSUPPORTED_VERSION}: the client went on "
                    f"({', '.join(went_on)})",
                    conv,
                )
            elif not closed:
                check.failed(
                    name,
                    f"initialize answered with {UNSUPPORTED_VERSION}: the client did not "
                    f"close within {wait:g} s",
                    conv,
                )
            else:
                check.passed(
                    name, f"initialize answered with {UNSUPPORTED_VERSION}: the client closed"
                )
            # What the mirror thinks of a session it never answered is no finding.
            conv.violations.clear()


#: The capabilities the probe declares in the checks of these rules (others: every one):
#: a capability left out, for the client to see a notification it gates.
_CAPABILITIES: Final[Mapping[str, Mapping[str, Any]]] = {
    "capability.undeclared-notification": {"tools": {}, "prompts": {}, "resources": {}},
}


def _after_answer(conv: Conversation) -> list[str]:
    """What the client sent after the probe's answer to its ``initialize`` (the methods, or
    "an answer")."""
    out: list[str] = []
    answered = False
    for line in conv.lines:
        if line.side == "probe" and UNSUPPORTED_VERSION.encode() in line.data:
            answered = True
        elif answered and line.side == "peer":
            try:
                value = orjson.loads(line.data)
            except orjson.JSONDecodeError:
                value = None
            method = value.get("method") if isinstance(value, dict) else None
            out.append(method if isinstance(method, str) else "an answer")
    return out


def run_client_probe(
    target: Target,
    *,
    timeout: float = DEFAULT_TIMEOUT,
    startup: float = DEFAULT_STARTUP,
    examples: int = DEFAULT_EXAMPLES,
    seed: int | None = None,
    jobs: int = DEFAULT_JOBS,
    progress: TextIO | None = None,
    strict: bool = False,
) -> Report:
    """Probe the client ``target`` (see the module; a
    :class:`~mcp_sansio.testing.ClientTarget`, or our own client in this process, a
    :class:`~mcp_sansio.testing.ClientConnectionTarget`) and return the :class:`Report`.

    :param timeout: seconds the client has for each answer.
    :param startup: seconds a fresh client has to start its server and ask to initialize.
    :param examples: fuzz examples (0: no fuzz phase).
    :param seed: the fuzz phase's seed (default: a random one, given in the report).
    :param jobs: checks run at once (each with its own client process).
    :param progress: where the progress bar goes (e.g. ``sys.stderr``), or nowhere.
    :param strict: count warnings (SHOULD, SHOULD NOT and implied rules) as failures.
    :raises TargetError: the client cannot be started at all.

    A client that opens no session (it sends nothing, no ``initialize``, or never
    ``notifications/initialized``) gets no verdict: the report says why
    (:attr:`Report.unusable`).
    """
    bar = Progress(progress)
    seed_value = random.SystemRandom().randrange(2**32) if seed is None else seed
    probe = _ClientProbe(target, timeout=timeout, startup=startup, jobs=jobs, progress=bar)
    outcomes = probe.versions_phase()
    notes: list[str] = []
    conversations = 1
    unusable = probe.unusable()
    if unusable is None:
        plan = probe.plan()
        conversations += len(plan)
        outcomes += probe.run(plan, "checks")
        version = probe.offered[0]
        if examples > 0:
            # What the checks found is not looked for again (their failures are minimal).
            failed = {o.rule for o in outcomes if o.status == "fail"}
            outcomes += fuzz_phase(
                bar,
                notes,
                target,
                version,
                examples=examples,
                seed_value=seed_value,
                timeout=timeout,
                startup=startup,
                rules=sorted(set(client_shot_builders()) - failed),
                peer=Role.CLIENT,
            )
            conversations += examples
        passive_outcomes(outcomes, probe.offered, conversations, Role.CLIENT)
        notes.append("clients are probed in the initialize era")
        notes += unopened_notes(probe.unopened)
    else:
        outcomes = []
        notes += unusable[1]
    return Report(
        target=target.describe(),
        transport=target.transport,
        offered=tuple(probe.offered),
        answers=dict(probe.answers),
        rows=report_rows(outcomes, probe.offered, Role.CLIENT, strict),
        seed=seed_value,
        examples=examples if probe.offered else 0,
        notes=tuple(notes),
        unusable=None if unusable is None else unusable[0],
        evidence=() if unusable is None else unusable[2],
        strict=strict,
    )
