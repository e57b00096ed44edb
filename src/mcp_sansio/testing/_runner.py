"""What the probe of a server and the probe of a client share: the progress bar
(:class:`Progress`), one check and its conversations (:class:`Check`), the base of a probe
(:class:`Probe`: running checks, at most ``jobs`` at once; why a peer cannot be used), the
checks that fire one shot (:func:`shot_check`) or an oversized message
(:func:`oversized_check`), and the fuzz phase (:func:`fuzz`, :func:`fuzz_phase`).
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, Final, TextIO

from hypothesis import HealthCheck, Phase, Verbosity, settings
from hypothesis import seed as hypothesis_seed
from hypothesis.stateful import run_state_machine_as_test

from mcp_sansio._state import Role
from mcp_sansio._versions import ALL_VERSIONS, VERSIONS
from mcp_sansio.testing._conversation import Conversation
from mcp_sansio.testing._faults import FAULTS, canonical
from mcp_sansio.testing._peer_machine import PeerMachine, SessionRefused
from mcp_sansio.testing._report import Outcome
from mcp_sansio.testing._shots import LiveGround, to_shot
from mcp_sansio.testing._targets import Target, TargetError
from mcp_sansio.testing._wire import (
    DEFAULT_STARTUP,
    PeerViolation,
    Shot,
    WireLine,
)

DEFAULT_EXAMPLES: Final = 20
#: Checks run at once (each on its own peer).
DEFAULT_JOBS: Final = 4
#: The size of the oversized line (4 MiB and 1 KiB: above the usual limit of 4 MiB).
#: The bound on hypothesis's shrinking of the fuzz failures of one version, in seconds.
SHRINK_SECONDS: Final = 60
#: The bound on hypothesis's successful shrinks of one fuzz failure.
MAX_SHRINKS: Final = 200
#: Steps per fuzz example.
STEPS: Final = 8
# ---------------------------------------------------------------------- progress


def split_eras(versions: Sequence[str]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``versions`` in two, in order: those of the initialize era (a handshake opens a
    session: the probe checks the lifecycle there) and those of 2026-07-28 (every request
    stands alone). The one place the probe chooses by era what to check."""
    handshake = tuple(v for v in versions if VERSIONS[v].policy.handshake)
    return handshake, tuple(v for v in versions if v not in handshake)


class Progress:
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


class Check:
    """One check's outcomes, and its conversations."""

    def __init__(self, probe: Probe, version: str) -> None:
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


CheckFn = Callable[[Check], None]


def _asked_order(asked: str) -> tuple[bool, int]:
    """``server/discover`` first, then ``initialize VERSION``, newest first."""
    version = asked.rsplit(" ", 1)[-1]
    return asked != "server/discover", ALL_VERSIONS.index(version) if version in VERSIONS else 0


class Probe:
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
        progress: Progress,
    ) -> None:
        self.target = target
        self.versions = tuple(versions)
        self.timeout = timeout
        self.startup = startup
        self.jobs = max(1, jobs)
        self.progress = progress
        self.legacy, self.modern = split_eras(self.versions)
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
            check = Check(self, version)
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

    def versions_phase(self) -> list[Outcome]:
        """The first phase: the versions the peer offers (:attr:`offered`)."""
        raise NotImplementedError

    def plan(self) -> list[tuple[str, CheckFn]]:
        """The checks of the second phase, once a version is offered."""
        raise NotImplementedError


def shot_check(
    name: str,
    builder: Callable[[Conversation, Any], Shot | str],
    capabilities: Mapping[str, Any] | None = None,
) -> CheckFn:
    """The check that fires ``builder``'s canonical near miss in a fresh session (we
    declare ``capabilities``, or the default)."""

    def run(check: Check) -> None:
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


def oversized_check(check: Check) -> None:
    """The check of ``envelope.oversized-message`` (a line past 4 MiB, in a fresh
    session: not one of the shots the fuzz phase fires)."""
    with check.talk() as conv:
        if not conv.open_session():
            check.not_applicable("envelope.oversized-message", "the session could not be opened")
            return
        shot = to_shot(FAULTS["envelope.oversized-message"](LiveGround(conv), canonical))
        assert not isinstance(shot, str)
        check.fire(conv, shot)


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
    progress: Progress | None = None,
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
    bar: Progress, notes: list[str], *args: Any, examples: int, **options: Any
) -> list[Outcome]:
    """:func:`fuzz` (same arguments) with a progress bar of its own; its notes go to
    ``notes``; returns its outcomes."""
    bar.start(f"fuzz {args[1]}", examples)
    found, more = fuzz(*args, examples=examples, progress=bar, **options)
    notes += more
    rules_hit = sorted({o.rule for o in found})
    bar.finish("violations: " + ", ".join(rules_hit) if rules_hit else "no violation")
    return found
