""":class:`PeerMachine`: a hypothesis state machine that drives a live peer.

It drives one fresh peer per example through legal requests (params from
:func:`mcp_sansio.testing.params`), near-misses, scripted near-misses and cancellations,
and fails with a :class:`~mcp_sansio.testing.PeerViolation` (one subclass per rule, so
that hypothesis shrinks each rule's failure on its own) as soon as the peer breaks a rule.
``PeerMachine.against(target)`` makes a machine for one target; its ``TestCase`` runs
under pytest or unittest.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, ClassVar, Final

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from mcp_sansio._errors import LocalProtocolError
from mcp_sansio._events import (
    ErrorResponse,
)
from mcp_sansio._state import Role
from mcp_sansio._versions import VERSIONS, Era, capability_met
from mcp_sansio.testing._conversation import Conversation
from mcp_sansio.testing._faults import FAULTS
from mcp_sansio.testing._replay import agrees, replay
from mcp_sansio.testing._shots import client_shot_builders, shot_builders
from mcp_sansio.testing._targets import Target
from mcp_sansio.testing._wire import (
    DEFAULT_STARTUP,
    DEFAULT_TIMEOUT,
    PeerViolation,
    T,
    Violation,
    method_of,
)

# ---------------------------------------------------------------------- legal traffic

#: Requests the machine sends as legal traffic: read-only ones (never ``tools/call``,
#: which may do anything), by era.
SAFE_METHODS: Final[Mapping[Era, tuple[str, ...]]] = {
    Era.INITIALIZE: (
        "ping",
        "tools/list",
        "prompts/list",
        "prompts/get",
        "resources/list",
        "resources/templates/list",
        "resources/read",
        "completion/complete",
        "logging/setLevel",
    ),
    Era.STATELESS: (
        "server/discover",
        "tools/list",
        "prompts/list",
        "prompts/get",
        "resources/list",
        "resources/templates/list",
        "resources/read",
        "completion/complete",
    ),
}


#: The requests the probe sends a client under test in legal traffic: none that asks it to
#: act (sampling, elicitation), which may reach a model or a person.
SAFE_CLIENT_METHODS: Final[tuple[str, ...]] = ("ping", "roots/list")


def legal_methods(conv: Conversation) -> list[str]:
    """The safe requests the peer's capabilities allow in this conversation."""
    spec = VERSIONS[conv.version]
    if conv.peer is Role.CLIENT:
        safe, caps = SAFE_CLIENT_METHODS, conv.client_capabilities or {}
    else:
        safe, caps = SAFE_METHODS[conv.era], conv.server_capabilities or {}
    return [
        m
        for m in safe
        if m in spec.methods
        and (not spec.methods[m].gate or capability_met(caps, spec.methods[m].gate))
    ]


def _clean_params(value: Any) -> Mapping[str, Any] | None:
    if not isinstance(value, dict):
        return None
    params = {k: v for k, v in value.items() if k not in ("_meta", "task")}
    return params


# ---------------------------------------------------------------------- the machine


#: Requests whose normal answer the protocol alone decides (a ``"result"`` script of
#: another method may meet an unknown tool, prompt or resource of the live server).
_PROTOCOL_ANSWERED: Final = frozenset({"ping", "initialize", "server/discover"})


def _known_rules() -> frozenset[str]:
    from mcp_sansio.testing._rules import RULES

    return frozenset(RULES)


@functools.cache
def _scripts(version: str, rules: frozenset[str] | None) -> st.SearchStrategy[Any] | None:
    """The scripted near-misses of ``version`` (client to server) of the rules no single
    message breaks (those of :data:`~._faults.FAULTS` are fired live, by :meth:`near_miss`),
    without those whose expectation a live server cannot show (``"close"``)."""
    from mcp_sansio.testing._near_miss import near_misses
    from mcp_sansio.testing._rules import RULES

    names = [
        name
        for name, r in RULES.items()
        if name not in FAULTS
        and r.applies(version, Role.SERVER)
        and r.reply != "close"
        and r.level != "ours"  # what the specification leaves open: the checks judge it
        and (rules is None or name in rules)
    ]
    if not names:
        return None
    return near_misses(version, sender=Role.CLIENT, rules=names)


class SessionRefused(Exception):
    """The peer refused the session the machine was made for (a server that does not
    speak the version): a mistake in the machine's set-up, not a violation."""


class PeerMachine(RuleBasedStateMachine):
    """A hypothesis state machine that drives one fresh MCP server per example (we play
    the client) through legal requests, near-misses and cancellations, and fails with a
    :class:`PeerViolation` as soon as the server breaks a rule. Made ``against`` a
    :class:`~mcp_sansio.testing.ClientTarget` with ``peer=Role.CLIENT``, it drives a
    client the same way (we play its server, in the initialize era): ``ping`` and
    ``roots/list`` as legal traffic, the near-misses of :func:`client_shot_builders`, and
    cancellations.

    Make one for a target with :meth:`against`, then run its ``TestCase`` (pytest and
    unittest collect it) or pass it to :func:`hypothesis.stateful.run_state_machine_as_test`::

        from mcp_sansio.testing import PeerMachine, StdioTarget

        TestMyServer = PeerMachine.against(
            StdioTarget(["python", "my_server.py"]), version="2025-11-25"
        ).TestCase

    Each example is a new conversation with a new peer (a new process, a new HTTP session,
    a new in-process session): the steps of one example never see another's. Legal
    traffic uses only read-only requests (``ping``, the lists, ``resources/read``,
    ``prompts/get``, ``completion/complete``, ``logging/setLevel``), never ``tools/call``.
    """

    target: ClassVar[Target | None] = None
    """The peers under test."""
    version: ClassVar[str] = "2025-11-25"
    """The protocol version spoken."""
    timeout: ClassVar[float] = DEFAULT_TIMEOUT
    """Seconds the peer has for each answer."""
    startup: ClassVar[float] = DEFAULT_STARTUP
    """Seconds a fresh peer has for its first answer, at least."""
    near_miss_rules: ClassVar[frozenset[str] | None] = None
    """The near-miss rules fired (default: every rule of :func:`shot_builders`)."""
    legacy_versions: ClassVar[tuple[str, ...]] = ()
    """Initialize era: the versions the peer may answer ``initialize`` with (default:
    all)."""
    peer: ClassVar[Role] = Role.SERVER
    """The role of the peers under test."""
    peer_versions: ClassVar[tuple[str, ...]] = ()
    """The versions the peer speaks, when known (the probe passes those it offers). The
    scripted near-misses assume a peer of their version only; one that speaks more may
    rightly answer some of them otherwise (a server of both eras accepts ``initialize``
    in a 2026-07-28 script), and those are not fired."""

    def __init__(self) -> None:
        super().__init__()
        if self.target is None:
            raise TypeError("make a machine for a target with PeerMachine.against(target)")
        self.conversation = Conversation(
            self.target,
            self.version,
            timeout=self.timeout,
            startup=self.startup,
            legacy_versions=self.legacy_versions or None,
            peer=self.peer,
        )
        self._opened = False
        self._scripted = False

    @classmethod
    def against(
        cls,
        target: Target,
        *,
        version: str = "2025-11-25",
        timeout: float = DEFAULT_TIMEOUT,
        startup: float = DEFAULT_STARTUP,
        rules: Iterable[str] | None = None,
        legacy_versions: Sequence[str] = (),
        peer_versions: Sequence[str] = (),
        name: str | None = None,
        peer: Role = Role.SERVER,
    ) -> type[PeerMachine]:
        """A machine class for ``target``, speaking ``version``; ``rules`` limits the
        near-misses to those rules; ``peer`` is the role of the peers (a client: the
        version is the newest the machine offers; the client asks for its own)."""
        if version not in VERSIONS:
            raise ValueError(f"unknown protocol version {version!r}")
        chosen = None if rules is None else frozenset(rules)
        known = set(shot_builders()) | set(client_shot_builders()) | set(_known_rules())
        if chosen is not None and (unknown := chosen - known):
            raise ValueError(f"unknown rules {sorted(unknown)}")
        attributes = {
            "target": target,
            "version": version,
            "timeout": timeout,
            "startup": startup,
            "near_miss_rules": chosen,
            "legacy_versions": tuple(legacy_versions),
            "peer_versions": tuple(peer_versions),
            "peer": peer,
        }
        return type(name or f"{cls.__name__}For{version.replace('-', '')}", (cls,), attributes)

    @initialize()
    def open_session(self) -> None:
        """Open the session: ``initialize`` and ``notifications/initialized`` (initialize
        era) or ``server/discover`` (2026-07-28)."""
        conv = self.conversation
        self._opened = True
        if conv.open_session():
            self._check()
            return
        self._check()  # no answer at all: a response.missing violation
        if conv.peer is Role.CLIENT:
            raise SessionRefused(f"the client did not open a session: {conv.dead}")
        answer = conv.answers(0)[0] if conv.answers(0) else None
        detail = (
            f"error {answer.code} {answer.message!r}" if isinstance(answer, ErrorResponse) else "no"
        )
        if not conv.policy.handshake:
            raise SessionRefused(
                f"server/discover got {detail} answer: the server does not speak {conv.version}"
            )
        conv._violate(
            "lifecycle.initialize-version",
            f"initialize for {conv.version} got {detail} answer; a server answers initialize "
            "with a version it supports",
        )
        self._check()

    def _check(self) -> None:
        conv = self.conversation
        if conv.violations:
            violation = conv.violations[0]
            raise PeerViolation.for_rule(violation.rule)(violation)

    @rule(data=st.data())
    def legal_request(self, data: st.DataObject) -> None:
        """A read-only request the server's capabilities allow, with params from the
        schema; any answer will do, but exactly one, in time."""
        conv = self.conversation
        methods = legal_methods(conv)
        if not methods:
            return
        method = data.draw(st.sampled_from(methods), label="method")
        params = self._params(data, method)
        # (Params the schema allows but our mirror refuses to send: the step is skipped.)
        with contextlib.suppress(LocalProtocolError):
            if conv.request(method, params) is not None:
                conv.barrier()  # an extra answer sent before this one is seen now
        self._check()

    def _params(self, data: st.DataObject, method: str) -> Mapping[str, Any] | None:
        from mcp_sansio.testing._schema_strategies import params as schema_params

        try:
            strategy = schema_params(self.version, method, extras=False)
        except KeyError:
            return None
        # No params first: what hypothesis shrinks towards, so a failure that does not
        # depend on them loses them at once.
        return _clean_params(data.draw(st.none() | strategy, label="params"))

    @rule(data=st.data())
    def near_miss(self, data: st.DataObject) -> None:
        """One near-miss message for one rule: the answer must be what the rule demands,
        and the peer must answer afterwards."""
        conv = self.conversation
        chosen = self.near_miss_rules
        builders = client_shot_builders() if conv.peer is Role.CLIENT else shot_builders()
        names = sorted(builders if chosen is None else chosen & set(builders))
        if not names:
            return
        name = data.draw(st.sampled_from(names), label="rule")

        def draw(strategy: st.SearchStrategy[T], canonical_value: T, /) -> T:
            return data.draw(strategy)

        shot = builders[name](conv, draw)
        if isinstance(shot, str):
            return
        problem = conv.shoot(shot)
        if problem is not None:
            conv._violate(shot.rule, f"{shot.why}: {problem}")
        self._check()

    @rule(data=st.data())
    def scripted_near_miss(self, data: st.DataObject) -> None:
        """A near-miss of :func:`mcp_sansio.testing.near_misses` (a whole script from a
        fresh connection), replayed on a fresh peer, at most once per example; only
        scripts our own Connection, given the live server's capabilities, agrees break
        their rule."""
        conv = self.conversation
        if self._scripted or conv.server_capabilities is None or conv.peer is Role.CLIENT:
            return  # (the scripts are a client's: not for a client under test)
        self._scripted = True
        strategy = _scripts(self.version, self.near_miss_rules)
        if strategy is None:
            return
        nm = data.draw(strategy, label="script")
        if nm.receiver_initiates or not agrees(
            nm, conv.server_capabilities, self.peer_versions or None
        ):
            return
        if nm.expect.reply == "result" and method_of(nm.message) not in _PROTOCOL_ANSWERED:
            return  # a normal answer to a tool, prompt or resource depends on the server's own
        assert self.target is not None
        problem, lines = replay(self.target, nm, timeout=self.timeout, startup=self.startup)
        if problem is not None:
            conv.violations.append(Violation(nm.rule, f"{nm.note or nm.rule}: {problem}", lines))
        self._check()

    @rule()
    def request_then_cancel(self) -> None:
        """A request cancelled at once: the peer may answer it or not, but nothing else
        may break (the mirror drops a late answer), and it must go on answering."""
        conv = self.conversation
        methods = legal_methods(conv)
        if not methods or (conv.policy.http_cancel_closes_stream and conv.transport == "http"):
            return
        rid = conv.request(methods[0], wait=False)
        if rid is None:
            self._check()
            return
        conv.cancel(rid)
        conv.barrier()
        self._check()

    @invariant()
    def conforms(self) -> None:
        """No violation so far (in what has arrived by now)."""
        if self._opened:
            self.conversation.drain(0.0)
            self._check()

    def teardown(self) -> None:
        """Shut the peer down."""
        self.conversation.close()
