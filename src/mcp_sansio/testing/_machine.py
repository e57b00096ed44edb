"""Judging a peer under test, and driving it with hypothesis.

:class:`Conversation` is one conversation with one fresh peer (a :class:`~._targets.Channel`),
judged by our own :class:`~mcp_sansio.Connection`: a *mirror* connection in the client
role sees every legal message we send and every message the peer sends, so any
:class:`~mcp_sansio.InvalidMessage` or :class:`~mcp_sansio.RemoteProtocolError` it raises
about the peer's messages is a violation by the peer, named after the rule it breaks (see
:func:`classify`). Near-miss messages, which break one rule on purpose, go out raw, past the
mirror, as a :class:`Shot`: the answer the rule demands (:class:`Demand`: an error with the
right code and id, nothing at all, or a normal answer; exactly one) is checked by
:meth:`Conversation.shoot`, and the peer must still answer afterwards.

:func:`shot_builders` lists the near-misses the probe and the machine fire, one builder per
rule, each drawing its variations from a :data:`Draw` (hypothesis in the fuzz phase, the
canonical choice in the deterministic checks).

:func:`replay` plays a scripted near-miss of :func:`mcp_sansio.testing.near_misses` (a
whole exchange from a fresh connection) against a fresh peer; :func:`agrees` says whether
our own Connection, configured like the live server (its versions, its capabilities),
finds that the script breaks its rule the way the rule says, since the scripts assume a
server of their own making.

:class:`PeerMachine` is a :class:`hypothesis.stateful.RuleBasedStateMachine` that drives one
fresh peer per example through legal requests (params from
:func:`mcp_sansio.testing.params`), near-misses, scripted near-misses and cancellations,
and fails with a
:class:`PeerViolation` (one subclass per rule, so that hypothesis shrinks each rule's
failure on its own) as soon as the peer breaks a rule. ``PeerMachine.against(target)``
makes a machine for one target; its ``TestCase`` runs under pytest or unittest.
"""

from __future__ import annotations

import contextlib
import functools
import string
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, ClassVar, Final, Protocol, TypeVar

import attrs
import orjson
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from mcp_sansio._connection import Connection
from mcp_sansio._errors import ErrorCode, LocalProtocolError, RemoteProtocolError
from mcp_sansio._events import (
    ConnectionClosed,
    ErrorResponse,
    InputRequired,
    InvalidMessage,
    Notification,
    Request,
    RequestId,
    Response,
)
from mcp_sansio._sentinels import NEED_DATA
from mcp_sansio._state import Role
from mcp_sansio._version import __version__
from mcp_sansio._versions import ALL_VERSIONS, VERSIONS, Direction, Era, Kind, capability_met
from mcp_sansio.testing._rules import OTHER_RULE
from mcp_sansio.testing._targets import MAX_LINE, Channel, Incoming, Target

__all__ = [
    "DEFAULT_STARTUP",
    "DEFAULT_TIMEOUT",
    "FIRST_WAIT",
    "GRACE",
    "KEPT_BYTES",
    "MAX_EXCHANGE",
    "MAX_UNREADABLE",
    "OTHER_RULE",
    "PROBE_INFO",
    "PROBE_SERVER_CAPABILITIES",
    "SAFE_CLIENT_METHODS",
    "SAFE_METHODS",
    "SHOWN_BYTES",
    "SHOWN_LINES",
    "Conversation",
    "Demand",
    "Draw",
    "PeerMachine",
    "PeerViolation",
    "SessionRefused",
    "Shot",
    "Violation",
    "WireLine",
    "agrees",
    "canonical",
    "client_shot_builders",
    "classify",
    "refusal",
    "collapse",
    "legal_methods",
    "replay",
    "sampled_message",
    "shot_builders",
]

#: How long the peer has to answer each message, in seconds, unless told otherwise.
DEFAULT_TIMEOUT: Final = 5.0
#: How long a fresh peer has for its first answer (a process starting up), at least.
DEFAULT_STARTUP: Final = 15.0
#: The ``clientInfo`` the probe sends.
PROBE_INFO: Final = {"name": "mcp-sansio-probe", "version": __version__}
#: The capabilities the probe declares when it plays the server (to a client under test):
#: everything a server can declare, so that any request of the client's is in order.
PROBE_SERVER_CAPABILITIES: Final[Mapping[str, Any]] = {
    "tools": {"listChanged": True},
    "resources": {"subscribe": True, "listChanged": True},
    "prompts": {"listChanged": True},
    "logging": {},
    "completions": {},
}
#: Longest rendering of one line in a report (the bytes beyond are counted, not shown).
SHOWN_BYTES: Final = 400
#: Most lines of one exchange in a report, once repeats are collapsed (:func:`collapse`).
SHOWN_LINES: Final = 100
#: How much of each line of an exchange is kept (:attr:`WireLine.data`), in bytes.
KEPT_BYTES: Final = 4096
#: How much of its exchange one conversation keeps in all, in bytes (the lines' kept
#: bytes; past it, a line keeps only its size).
MAX_EXCHANGE: Final = 4 * 1024 * 1024
#: How many lines that are not JSON-RPC messages (not JSON, or JSON that is neither an
#: object nor an array) a peer may send in one conversation: at this many the probe cuts the
#: conversation off (:attr:`Conversation.cut`).
MAX_UNREADABLE: Final = 100
#: How long the answer to a near-miss is waited for before a later message (``ping``)
#: checks that the peer has read it, in seconds.
FIRST_WAIT: Final = 0.25
#: How long the answer to a near-miss may then lag behind the answer to that later message.
GRACE: Final = 1.0

_META_VERSION: Final = "io.modelcontextprotocol/protocolVersion"
_META_CAPABILITIES: Final = "io.modelcontextprotocol/clientCapabilities"
_META_CLIENT_INFO: Final = "io.modelcontextprotocol/clientInfo"

T = TypeVar("T")


# ---------------------------------------------------------------------- records


@attrs.frozen
class WireLine:
    """One line of an exchange: what one side sent, or a note from the transport."""

    side: str
    """``"probe"`` (we sent it), ``"peer"`` (the peer did) or ``"note"``."""
    data: bytes
    """The bytes, as sent (a note's text, for a note): the first ``KEPT_BYTES`` of
    them."""
    size: int = attrs.field(default=attrs.Factory(lambda line: len(line.data), takes_self=True))
    """How many bytes were sent (``data`` may keep fewer)."""

    def __attrs_post_init__(self) -> None:
        if len(self.data) > KEPT_BYTES:
            object.__setattr__(self, "data", self.data[:KEPT_BYTES])

    def render(self, limit: int = SHOWN_BYTES) -> str:
        """The line for a report: ``-> ...``, ``<- ...`` or ``.. ...``, cut to ``limit``
        bytes (the size of the rest is given)."""
        arrow = {"probe": "->", "peer": "<-"}.get(self.side, "..")
        shown = self.data[:limit]
        text = shown.decode("utf-8", "backslashreplace")
        if self.size > len(shown):
            text += f"... ({self.size} bytes in all)"
        return f"{arrow} {text}"

    def to_json(self, limit: int = SHOWN_BYTES) -> dict[str, Any]:
        """The line as JSON: ``side``, ``text`` (cut like :meth:`render`) and ``size``."""
        return {
            "side": self.side,
            "text": self.data[:limit].decode("utf-8", "backslashreplace"),
            "size": self.size,
        }


#: The longest block of lines :func:`collapse` looks for repeats of.
_BLOCK: Final = 8


def collapse(lines: Sequence[WireLine], shown: int = SHOWN_LINES) -> list[WireLine]:
    """An exchange for a report: a block of up to 8 lines that repeats at once, three
    times or more, is shown once, then a note (``… the same 2 lines 7,000 more times``);
    of what remains, at most ``shown`` lines (the first and the last, and a note of how
    many are left out between)."""
    out: list[WireLine] = []
    i, n = 0, len(lines)
    while i < n:
        best, times = 0, 0
        for k in range(1, _BLOCK + 1):
            if i + 3 * k > n:
                break
            block = lines[i : i + k]
            j = i + k
            while j + k <= n and lines[j : j + k] == block:
                j += k
            repeats = (j - i) // k - 1
            if repeats >= 2 and k * repeats > best * times:
                best, times = k, repeats
        if not times:
            out.append(lines[i])
            i += 1
            continue
        out.extend(lines[i : i + best])
        what = "line" if best == 1 else f"{best} lines"
        out.append(WireLine("note", f"… the same {what} {times:,} more times".encode()))
        i += best * (times + 1)
    if len(out) > shown >= 2:
        head = (shown - 1) * 3 // 4
        tail = shown - 1 - head
        left = len(out) - head - tail
        note = WireLine("note", f"… {left:,} more lines not shown".encode())
        out = [*out[:head], note, *(out[len(out) - tail :] if tail else [])]
    return out


@attrs.frozen
class Violation:
    """A rule the peer broke, with the exchange that shows it."""

    rule: str
    """The rule's name (see :data:`mcp_sansio.testing.RULES`)."""
    message: str
    """What went wrong."""
    exchange: tuple[WireLine, ...]
    """Everything each side sent in the conversation, up to the violation."""
    part: str = "receiver"
    """The peer's part in it: ``"receiver"`` (it answered a message of the machine's
    wrongly) or ``"sender"`` (what it sent of its own breaks the rule)."""


class PeerViolation(AssertionError):
    """The peer broke a rule (raised by :class:`PeerMachine`). Each rule has its own
    subclass (:meth:`for_rule`), so that hypothesis tells the rules apart and shrinks each
    failure on its own."""

    rule: ClassVar[str] = ""

    def __init__(self, violation: Violation) -> None:
        lines = "\n".join("    " + line.render() for line in collapse(violation.exchange))
        super().__init__(f"[{violation.rule}] {violation.message}\n{lines}")
        self.violation = violation

    @classmethod
    def for_rule(cls, name: str) -> type[PeerViolation]:
        """The subclass for rule ``name`` (made once)."""
        return _violation_class(name)


@functools.cache
def _violation_class(name: str) -> type[PeerViolation]:
    title = "".join(part.capitalize() for part in name.replace(".", "-").split("-"))
    return type(f"{title}Violation", (PeerViolation,), {"rule": name})


@attrs.frozen
class Demand:
    """What the protocol demands in answer to one near-miss message."""

    reply: str
    """``"error"`` (exactly one error), ``"none"`` (nothing at all), ``"result"`` (exactly
    one normal answer) or ``"answer"`` (exactly one of either)."""
    codes: tuple[int, ...] = ()
    """The error codes accepted (empty: any)."""
    ids: tuple[RequestId | None, ...] = ()
    """The ids an answer may carry (``None`` for ``"id": null``)."""
    check: Callable[[Mapping[str, Any]], str | None] | None = attrs.field(default=None, eq=False)
    """A further check of the answer (the whole message): a complaint, or ``None``."""


def refusal(
    rule_name: str,
    ids: tuple[RequestId | None, ...],
    check: Callable[[Mapping[str, Any]], str | None] | None = None,
) -> Demand:
    """The error ``rule_name`` is due, with the code the rule table names for it (any
    code, where the text names none)."""
    from mcp_sansio.testing._rules import RULES

    code = RULES[rule_name].code
    return Demand("error", () if code is None else (code,), ids, check)


@attrs.frozen
class Shot:
    """One near-miss message, the rule it tests, and what the rule demands."""

    rule: str
    """The rule's name."""
    data: bytes
    """The message, as sent (one line, without its line ending)."""
    expect: Demand
    """The answer the rule demands."""
    why: str = ""
    """What is wrong with the message, for reports."""


def _key(value: Any) -> tuple[str, Any]:
    """An id as a dict key that tells ``1`` from ``"1"``."""
    return (type(value).__name__, value)


def _dumps(value: Any) -> bytes:
    return orjson.dumps(value)


# ---------------------------------------------------------------------- classification

# What our Connection says about a message of the peer → the rule it breaks (first match).
_CLASSES: Final = (
    ("answers no request", "response.unknown-id"),
    ("progress must increase", "progress.not-increasing"),
    ("progressToken", "progress.unknown-token"),
    ("progress never goes", "progress.unknown-token"),
    ("needs the subscriptionId", "subscriptions.listen-ack-first"),
    ("before the subscription's acknowledgement", "subscriptions.listen-ack-first"),
    ("already acknowledged", "subscriptions.listen-ack-first"),
    ("acknowledged", "subscriptions.not-opted-in"),
    ("opted into", "subscriptions.not-opted-in"),
    ("not on this stream", "subscriptions.not-opted-in"),
    ("was not subscribed to", "resources.updated-not-subscribed"),
    ("needs the client capability", "capability.undeclared-client-capability"),
    ("did not declare elicitation", "capability.undeclared-client-capability"),
    ("elicitation needs", "capability.undeclared-client-subcapability"),
    ("needs the capability sampling", "capability.undeclared-client-subcapability"),
    ("needs the server capability", "capability.undeclared-notification"),
    ("a 2026-07-28 server never sends", "stateless.server-request"),
    ("is not sent by the server", "method.wrong-direction"),
    ("Method not found", "method.unknown"),
    ("is not allowed from the server in state", "lifecycle.server-request-before-initialized"),
    ("chose protocol version", "lifecycle.initialize-version"),
    (
        "but the request did not declare the client capability",
        "input-required.undeclared-capability",
    ),
    ("resultType", "input-required.invalid"),
    ("input", "input-required.invalid"),
    ("requestState", "input-required.invalid"),
    ("Parse error", "envelope.parse-error"),
    ("batches", "envelope.batch-not-allowed"),
    ("larger than", "envelope.oversized-message"),
    ("Invalid response", "envelope.invalid-response"),
    ("Invalid request: a JSON-RPC", "envelope.invalid-request"),
    ("jsonrpc", "envelope.invalid-request"),
)


def classify(message: str, *, notification: str | None = None) -> str:
    """The rule a peer broke, from what our :class:`~mcp_sansio.Connection` said about its
    message (:attr:`InvalidMessage.message` or a :class:`RemoteProtocolError`'s).
    ``notification``: the method, when the message was a notification (a gating fault
    of a request and of a notification read alike)."""
    if notification is not None and "not allowed from the server in state" in message:
        return "lifecycle.notification-before-initialized"
    for needle, name in _CLASSES:
        if needle in message:
            return name
    return OTHER_RULE


# ---------------------------------------------------------------------- the conversation

_NO_CAPS: Final[Mapping[str, Any]] = {}


class Conversation:
    """One conversation with one fresh peer of ``target``, judged by a mirror
    :class:`~mcp_sansio.Connection` in the other role.

    :param target: where the peer comes from (a new one is opened here).
    :param version: the protocol version to speak. In the initialize era the mirror
        accepts any of ``legacy_versions`` in the answer (a server may answer another).
        With a client peer, the client asks for a version: the one it gets is
        :attr:`version` once the session is open.
    :param timeout: how long the peer has to answer each message, in seconds.
    :param startup: how long it has for its first answer, at least (a process starting).
    :param capabilities: the capabilities we declare (default: none to a server,
        :data:`PROBE_SERVER_CAPABILITIES` to a client).
    :param peer: the peer's role: :attr:`Role.SERVER <mcp_sansio.Role.SERVER>` (we play
        the client), or :attr:`Role.CLIENT <mcp_sansio.Role.CLIENT>` (we play the server
        of the initialize era: the client opens the session, :meth:`open_session` waits
        for it and answers its ``initialize``; its other requests are held unanswered, so
        that it stays in the session while the probe speaks).
    :param answer_version: with a client peer, the ``protocolVersion`` to answer its
        ``initialize`` with, whatever it asked (sent past the mirror), to see what the
        client does with a version it did not ask for.
    :param cancel: an event that, once set, ends every wait of the conversation at once
        (the probe sets it when it is interrupted).

    What one conversation keeps is bounded: its channel reads at most
    ``MAX_MESSAGES`` messages and
    ``MAX_RECEIVED`` bytes, and its exchange
    (:attr:`lines`) keeps ``KEPT_BYTES`` of each line, ``MAX_EXCHANGE`` in all. A
    peer that sends more, or ``MAX_UNREADABLE`` lines that are not JSON-RPC messages, is
    cut off (:attr:`cut`): the conversation ends there, as if the peer had stopped answering.
    A rule broken again in the same conversation is not recorded again (the first
    exchange that shows it is the shortest).
    """

    def __init__(
        self,
        target: Target,
        version: str,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        startup: float = DEFAULT_STARTUP,
        capabilities: Mapping[str, Any] | None = None,
        legacy_versions: Sequence[str] | None = None,
        peer: Role = Role.SERVER,
        answer_version: str | None = None,
        cancel: threading.Event | None = None,
    ) -> None:
        spec = VERSIONS[version]
        self._cancel = cancel
        self.peer = peer
        """The peer's role."""
        self.answer_version = answer_version
        self.version = version
        """The version spoken (in the initialize era, the one asked for)."""
        self.era = spec.era
        """Its era."""
        self.timeout = timeout
        """Seconds the peer has for each answer."""
        self.startup = startup
        """Seconds it has for its first answer, at least."""
        self._started = False
        if capabilities is None and peer is Role.CLIENT:
            capabilities = PROBE_SERVER_CAPABILITIES
        self.capabilities: Mapping[str, Any] = dict(capabilities or {})
        """The capabilities we declare."""
        if peer is Role.CLIENT and self.era is Era.STATELESS:
            raise ValueError("a client is probed in the initialize era only")
        if self.era is Era.STATELESS:
            versions: tuple[str, ...] = (version,)
        else:
            legacy = [v for v in (legacy_versions or ALL_VERSIONS) if VERSIONS[v].era is spec.era]
            versions = tuple(sorted({*legacy, version}, reverse=True))
        self.mirror = Connection(
            peer.peer,
            versions=versions,
            capabilities=self.capabilities,
            implementation=PROBE_INFO,
            max_message_size=MAX_LINE,
            # Strict: what the peer sends against a SHOULD of its own is found too (and
            # charged as a warning, by the sentence that says so).
            strict=True,
        )
        """The judge: our Connection, in the role we play."""
        self.transport = target.transport
        """The target's transport."""
        self.channel: Channel = target.open()
        """The peer."""
        self.lines: list[WireLine] = []
        """Everything sent and received so far."""
        self.violations: list[Violation] = []
        #: What the peer answered to the last near miss (for reports: "error -32601 under
        #: id 3", "no answer", ...).
        self.last_answer = ""
        """The rules the peer broke so far."""
        self.notifications: list[Notification] = []
        """The notifications the peer sent that the mirror accepted."""
        self.server_requests: list[Request] = []
        """The requests the peer sent that the mirror accepted."""
        self.held: list[Request] = []
        """A client peer's requests, held unanswered (see ``peer``)."""
        self.server_capabilities: Mapping[str, Any] | None = (
            self.capabilities if peer is Role.CLIENT else None
        )
        """The server's capabilities, once known (``initialize`` or ``server/discover``);
        ours, with a client peer."""
        self.client_capabilities: Mapping[str, Any] | None = (
            None if peer is Role.CLIENT else self.capabilities
        )
        """The client's capabilities: ours, or a client peer's once it asked to
        ``initialize``."""
        self.requested: str | None = None
        """The version a client peer asked for in its ``initialize``."""
        self.client_info: Any = None
        """A client peer's ``clientInfo``."""
        self._initialized = False
        self._feeding = b""
        self.negotiated: str | None = None
        """The version the ``initialize`` result named (initialize era)."""
        self.dead = ""
        """Why the conversation cannot go on (the peer stopped answering, closed), or
        ``""``."""
        self.cut = ""
        """Why the probe cut the conversation off (the peer sent more than the bounds
        allow, or the probe was interrupted), or ``""``; then :attr:`dead` says so too,
        and nothing more is read."""
        self.peer_lines = 0
        """How many messages (lines) the peer sent."""
        self.unreadable = 0
        """How many of them are not JSON-RPC messages (not JSON, or neither an object nor an
        array)."""
        self.echoes = 0
        """How many of them repeat, byte for byte, a line the probe had sent (a peer that
        echoes its input sends nothing else)."""
        self._sent: set[int] = set()
        self._kept = 0
        self._first_unreadable = b""
        self._answers: dict[tuple[str, Any], list[Any]] = {}
        self._methods: dict[tuple[str, Any], str] = {}
        self._raw: dict[tuple[str, Any], list[tuple[int, Mapping[str, Any]]]] = {}
        self._nulls: list[tuple[int, Mapping[str, Any], Incoming]] = []
        self._failed: dict[int, Incoming] = {}
        self._late: set[tuple[str, Any]] = set()
        self.used_ids: set[tuple[str, Any]] = set()
        """The ids of the requests sent past the mirror (near misses), as ``(type name,
        id)``."""
        self._shooting = False
        self._received = 0
        self._mirror_broken = False
        self._next_raw = 0
        self._closed = False

    # -------------------------------------------------------------- sending

    def fresh_id(self) -> str:
        """An id no message of this conversation has used: ``"probe-N"``."""
        self._next_raw += 1
        return f"probe-{self._next_raw}"

    def _write(self, data: bytes) -> None:
        line = data.rstrip(b"\n")
        self._record("probe", line)
        self._sent.add(hash(line))
        self.channel.send(data)

    def _record(self, side: str, data: bytes) -> None:
        """Keep a line of the exchange, within ``KEPT_BYTES`` and ``MAX_EXCHANGE``."""
        keep = min(len(data), KEPT_BYTES, max(0, MAX_EXCHANGE - self._kept))
        self._kept += keep
        self.lines.append(WireLine(side, data[:keep], len(data)))

    @property
    def heard(self) -> bool:
        """Whether the peer has sent anything yet, or closed its side."""
        return self._received > 0 or self.channel.closed

    def request(
        self, method: str, params: Mapping[str, Any] | None = None, *, wait: bool = True
    ) -> Any:
        """Send a legal request through the mirror (the mirror fills in what the era needs,
        such as 2026-07-28's ``_meta``). With ``wait`` (the default), wait for the answer
        and return it (a :class:`~mcp_sansio.Response`, :class:`~mcp_sansio.ErrorResponse`
        or :class:`~mcp_sansio.InputRequired`), or ``None`` when none came in time (a
        ``response.missing`` violation is recorded). Without, return the request id."""
        rid = self.mirror.next_request_id()
        try:
            data = self.mirror.send(Request(id=rid, method=method, params=params))
        except LocalProtocolError as exc:
            if self.mirror.peer_closed:
                self._die(f"cannot send {method}: the peer closed ({exc})")
                return None
            raise
        self._methods[_key(rid)] = method
        self._answers[_key(rid)] = []
        self._write(data)
        if not wait:
            return rid
        return self.wait_answer(rid)

    def notify(self, method: str, params: Mapping[str, Any] | None = None) -> None:
        """Send a legal notification through the mirror."""
        self._write(self.mirror.send(Notification(method=method, params=params)))

    def cancel(self, rid: RequestId, reason: str = "cancelled by the probe") -> None:
        """Cancel our request ``rid``: ``notifications/cancelled`` (the initialize era;
        2026-07-28 on a stream of lines), or closing its HTTP stream (2026-07-28 over
        HTTP). Its late answer, if any, is dropped by the mirror."""
        if self.era is Era.STATELESS and self.channel.abort(rid):
            self.mirror.send(
                Notification(method="notifications/cancelled", params={"requestId": rid})
            )
            self._record("note", f"closed the stream of request {rid!r}".encode())
            return
        self.notify("notifications/cancelled", {"requestId": rid, "reason": reason})

    def wait_answer(
        self, rid: RequestId, timeout: float | None = None, *, blame: bool = True
    ) -> Any:
        """The answer to our request ``rid``: waits for it (at most ``timeout``, default
        the conversation's); ``None`` when none came, and then (with ``blame``) a
        ``response.missing`` violation is recorded."""
        key = _key(rid)
        limit = self.timeout if timeout is None else timeout
        wait = limit
        if not self._started:
            # A fresh peer's first answer: the startup bound, from its start.
            limit = max(limit, self.startup)
            wait = max(wait, self.startup - (time.monotonic() - self.channel.opened))
        found = self._pump(lambda: bool(self._answers.get(key)), wait)
        self._started = True
        if found:
            return self._answers[key][0]
        method = self._methods.get(key, "request")
        if not self.dead:
            if self.channel.closed:
                if blame:
                    self._violate(
                        "response.missing",
                        f"the peer closed its side without answering {method} (id {rid!r})",
                    )
                self._die(f"the peer closed without answering {method} (id {rid!r})")
            else:
                if blame:
                    self._violate(
                        "response.missing",
                        f"no answer to {method} (id {rid!r}) within {limit:g} s",
                    )
                self._die(f"no answer to {method} within {limit:g} s")
        return None

    def answers(self, rid: RequestId) -> list[Any]:
        """Every answer to our request ``rid`` so far."""
        return list(self._answers.get(_key(rid), ()))

    def send_raw(self, data: bytes, ids: Iterable[RequestId] = ()) -> int:
        """Send ``data`` as it is, past the mirror; answers under ``ids`` are collected for
        :meth:`raw_answers` instead of going to the mirror. Returns a mark for
        :meth:`raw_answers`."""
        for rid in ids:
            self._raw.setdefault(_key(rid), [])
        self.used_ids.update(_key(rid) for rid in _ids_in(data))
        mark = self._received
        self._write(data)
        return mark

    def raw_answers(self, mark: int, ids: Iterable[RequestId]) -> list[Mapping[str, Any]]:
        """The answers collected under ``ids``, and every ``"id": null`` error and
        transport failure that arrived after ``mark``."""
        found: list[tuple[int, Mapping[str, Any]]] = []
        for rid in ids:
            found.extend(self._raw.get(_key(rid), ()))
        found.extend((seq, msg) for seq, msg, _ in self._nulls if seq > mark)
        found.extend(
            (seq, {"transport": item.note, "status": item.status})
            for seq, item in self._failed.items()
            if seq > mark
        )
        return [msg for _, msg in sorted(found, key=lambda pair: pair[0])]

    def forget_raw(self, ids: Iterable[RequestId]) -> None:
        """Stop collecting answers under ``ids`` (later ones go to the mirror, which
        calls them answers to unknown ids)."""
        for rid in ids:
            if self._raw.pop(_key(rid), None) == []:
                self._late.add(_key(rid))

    # -------------------------------------------------------------- opening

    def open_session(self) -> bool:
        """Start the session the era wants: ``initialize`` and
        ``notifications/initialized`` (initialize era), ``server/discover`` (2026-07-28:
        a server of both eras decides per process or session). ``False`` when the peer
        refused or did not answer. With a client peer: wait for its ``initialize``,
        answer it, and wait for its ``notifications/initialized``."""
        if self.peer is Role.CLIENT:
            # The startup bound counts from the client's start (it has connected since).
            wait = max(self.timeout, self.startup - (time.monotonic() - self.channel.opened))
            opened = self._pump(lambda: self._initialized or self._mirror_broken, wait)
            self._started = True
            if not opened or self._mirror_broken or not self._initialized:
                if not self.dead:
                    self._die(
                        "the client did not open a session (initialize, then "
                        "notifications/initialized)"
                        + (" before it closed" if self.channel.closed else " in time")
                    )
                return False
            self.negotiated = self.mirror.protocol_version
            if self.negotiated is not None:
                self.version = self.negotiated
            # Open means answering: a ping makes sure the client reads what comes next.
            return self.barrier()
        if self.era is Era.STATELESS:
            answer = self.request("server/discover")
            if isinstance(answer, Response):
                caps = answer.result.get("capabilities")
                self.server_capabilities = caps if isinstance(caps, dict) else {}
                return True
            return False
        answer = self.request("initialize", self.initialize_params(self.version))
        if not isinstance(answer, Response) or self._mirror_broken:
            return False
        self.server_capabilities = self.mirror.server_capabilities
        self.negotiated = self.mirror.protocol_version
        self.notify("notifications/initialized")
        return True

    def initialize_params(self, version: str) -> dict[str, Any]:
        """The params of our ``initialize`` for ``version``."""
        return {
            "protocolVersion": version,
            "capabilities": dict(self.capabilities),
            "clientInfo": dict(PROBE_INFO),
        }

    def meta(self, **overrides: Any) -> dict[str, Any]:
        """A valid 2026-07-28 request ``_meta`` (keys given as keywords replace, a value
        of ``None`` removes)."""
        meta: dict[str, Any] = {
            _META_VERSION: self.version,
            _META_CAPABILITIES: dict(self.capabilities),
            _META_CLIENT_INFO: dict(PROBE_INFO),
        }
        names = {"version": _META_VERSION, "capabilities": _META_CAPABILITIES}
        for name, value in overrides.items():
            key = names.get(name, name)
            if value is None:
                meta.pop(key, None)
            else:
                meta[key] = value
        return meta

    def barrier(self) -> bool:
        """Make sure the peer has dealt with everything sent so far and still answers:
        wait for every HTTP exchange to end, else send ``ping`` (initialize era) or
        ``server/discover`` (2026-07-28) and wait for its answer."""
        if self.dead:
            return False
        # (A stream the server keeps open after its last answer is not waited out.)
        settled = self.channel.settle(min(self.timeout, GRACE))
        if settled:
            self._pump(lambda: False, 0.0)
            return True
        method = "server/discover" if self.era is Era.STATELESS else "ping"
        rid = self.request(method, wait=False)
        return rid is not None and self.wait_answer(rid, blame=False) is not None

    def drain(self, seconds: float) -> None:
        """Take what the peer sends for ``seconds``."""
        self._pump(lambda: False, seconds)

    def wait_closed(self, seconds: float) -> bool:
        """Take what the peer sends until it closes its side (``True``), at most
        ``seconds``."""
        return self._pump(lambda: self.channel.closed, seconds)

    # -------------------------------------------------------------- near-misses

    def shoot(self, shot: Shot) -> str | None:
        """Send a near-miss and judge the answer against ``shot.expect``; afterwards the
        peer must still answer (:meth:`barrier`). Returns what went wrong, or ``None``."""
        expect = shot.expect
        ids = [rid for rid in expect.ids if rid is not None]
        # Ids the message carries that the answer must not (a batch's members).
        carried = _ids_in(shot.data)
        watch = [*ids, *(rid for rid in carried if rid not in ids)]
        self._shooting = True
        try:
            mark = self.send_raw(shot.data, watch)

            def answered() -> bool:
                return bool(self.raw_answers(mark, watch))

            if expect.reply != "none" and not self._pump(answered, min(self.timeout, FIRST_WAIT)):
                # No answer yet: make sure the peer has read the message (it answers a
                # later one), then give the answer a last moment to arrive.
                alive = self.barrier()
                if alive and not answered():
                    self._pump(answered, min(self.timeout, GRACE))
            else:
                alive = self.barrier()
            got = self.raw_answers(mark, watch)
        finally:
            self._shooting = False
        self.forget_raw(watch)
        self.last_answer = "; ".join(_describe(m) for m in got) or "no answer"
        header_level = self.transport == "http" and self.era is Era.STATELESS
        problem = _judge(expect, got, self.transport, header_level and _headerless(shot.data))
        if problem is None and not alive:
            problem = "the peer stopped answering after this message" + (
                f" ({self.dead})" if self.dead else ""
            )
        return problem

    # -------------------------------------------------------------- receiving

    def _pump(self, done: Callable[[], bool], timeout: float | None) -> bool:
        """Take what the peer sends until ``done()`` or the time is up (at once when the
        conversation is cut off)."""
        limit = self.timeout if timeout is None else timeout
        deadline = time.monotonic() + limit
        while not done():
            if self._cancel is not None and self._cancel.is_set() and not self.cut:
                self._cut_off("the probe was interrupted")
            if self.cut:
                return done()
            remaining = deadline - time.monotonic()
            if remaining <= 0 and limit > 0:
                return False
            item = self.channel.receive(max(0.0, min(remaining, 0.5)))
            if item is None:
                if self.channel.closed:
                    self._peer_closed()
                    return done()
                if limit <= 0:
                    return done()
                continue
            self._take(item)
        return True

    def _peer_closed(self) -> None:
        if self.mirror.peer_closed:
            return
        self.mirror.receive_data(b"")
        self._events()

    def _take(self, item: Incoming) -> None:
        self._received += 1
        seq = self._received
        if item.overflow:
            self._cut_off(f"cut off: {item.note}")
            return
        if item.failed is not None:
            self._record("note", item.note.encode())
            rid = _ids_in(item.failed)
            key = _key(rid[0]) if rid else None
            if key is not None and key in self._answers and key not in self._raw:
                # A legal request of ours got no JSON-RPC answer at all.
                method = self._methods.get(key, "request")
                self._violate("response.missing", f"{item.note} (the request was {method})")
                self._answers[key].append(ErrorResponse(id=rid[0], code=-32000, message=item.note))
                return
            self._failed[seq] = item
            return
        if not item.data:
            self._record("note", item.note.encode())
            return
        self._record("peer", item.data)
        self.peer_lines += 1
        if hash(item.data) in self._sent:
            self.echoes += 1
        if item.note:
            self._record("note", item.note.encode())
        try:
            value = orjson.loads(item.data)
        except orjson.JSONDecodeError:
            value = None
        if not isinstance(value, (dict, list)):
            self.unreadable += 1
            if self.unreadable == 1:
                self._first_unreadable = item.data
        try:
            self._dispatch(seq, value, item)
        finally:
            if self.unreadable >= MAX_UNREADABLE and not self.cut:
                first = self._first_unreadable[:60].decode("utf-8", "backslashreplace")
                self._cut_off(
                    f"cut off: the peer sent {self.unreadable} lines that are not JSON-RPC "
                    f"messages (the first: {first!r})"
                )

    def _cut_off(self, why: str) -> None:
        self.cut = why
        self._die(why)

    def _dispatch(self, seq: int, value: Any, item: Incoming) -> None:
        """Route a message of the peer (parsed: ``value``) to a near miss, or the mirror."""
        if isinstance(value, list):
            rest = [m for m in value if not self._route(seq, m, item)]
            if not rest:
                return
            if len(rest) < len(value):
                for member in rest:
                    self._feed(_dumps(member))
                return
        elif isinstance(value, dict) and self._route(seq, value, item):
            return
        self._feed(item.data)

    def _route(self, seq: int, message: Any, item: Incoming) -> bool:
        """Keep an answer to a near-miss (or an ``"id": null`` error) away from the mirror."""
        if not isinstance(message, dict) or ("result" not in message and "error" not in message):
            return False
        if "id" not in message or message["id"] is None:
            if "error" in message or self._shooting:
                # Outside a near-miss, an id-less error is left alone (our Connection
                # accepts it); an id-less result goes to the mirror, which refuses it.
                self._nulls.append((seq, message, item))
                return True
            return False
        key = _key(message["id"])
        if key in self._raw:
            self._raw[key].append((seq, message))
            return True
        if key in self._late:
            # A late answer to a near-miss already judged (as unanswered): noted, not
            # passed on (the mirror would call it an answer to an unknown id).
            self._record("note", b"(a late answer to an earlier near-miss)")
            return True
        return False

    def _feed(self, data: bytes) -> None:
        if self._mirror_broken or self.mirror.peer_closed:
            return
        self._feeding = data
        self.mirror.receive_data(data + b"\n")
        self._events()

    def _events(self) -> None:
        mirror = self.mirror
        while not self._mirror_broken:
            try:
                event = mirror.next_event()
            except RemoteProtocolError as exc:
                self._mirror_broken = True
                self._violate(classify(exc.message), exc.message, "sender")
                return
            if event is NEED_DATA:
                return
            cls = type(event)
            if cls is Response or cls is ErrorResponse or cls is InputRequired:
                rid = event.id  # type: ignore[attr-defined]
                if rid is not None:
                    self._answers.setdefault(_key(rid), []).append(event)
            elif cls is Notification:
                self.notifications.append(event)  # type: ignore[arg-type]
                if event.method == "notifications/initialized":  # type: ignore[attr-defined]
                    self._initialized = True
            elif cls is Request:
                self._answer_peer(event)  # type: ignore[arg-type]
            elif cls is InvalidMessage:
                assert isinstance(event, InvalidMessage)
                method = _notification_method(event.raw)
                if not self._discovering(event):
                    rule_name = classify(event.message, notification=method)
                    self._violate(rule_name, event.message, "sender")
                if event.reply is not None:
                    self._send_reply(event.reply)
            elif cls is ConnectionClosed:
                return

    def _answer_peer(self, request: Request) -> None:
        """Answer a request of the peer that the mirror accepted."""
        self.server_requests.append(request)
        method = request.method
        reply: Response | ErrorResponse
        if self.peer is Role.CLIENT and method == "initialize":
            self._answer_initialize(request)
            return
        if self.peer is Role.CLIENT and method != "ping":
            self.held.append(request)
            return
        if method == "ping":
            reply = Response(id=request.id, result={})
        elif method == "roots/list":
            reply = Response(id=request.id, result={"roots": []})
        elif method == "elicitation/create":
            reply = Response(id=request.id, result={"action": "decline"})
        elif method == "sampling/createMessage":
            reply = Response(id=request.id, result=sampled_message())
        else:
            reply = ErrorResponse(
                id=request.id,
                code=ErrorCode.METHOD_NOT_FOUND,
                message=f"the probe does not handle {method}",
            )
        self._send_reply(reply)

    def _discovering(self, event: InvalidMessage) -> bool:
        """Whether ``event`` is a client peer's ``server/discover`` before it initialized: a
        client of both eras asks first, and falls back to ``initialize`` on the error that
        an initialize-era server (the mirror) answers."""
        if self.peer is not Role.CLIENT or self._initialized:
            return False
        try:
            value = orjson.loads(event.raw or self._feeding)
        except orjson.JSONDecodeError:
            return False
        return isinstance(value, dict) and value.get("method") == "server/discover"

    def _answer_initialize(self, request: Request) -> None:
        """A client peer's ``initialize``: the version it asked for if the mirror speaks
        it, else the mirror's newest (or :attr:`answer_version`, past the mirror)."""
        params = request.params if isinstance(request.params, dict) else {}
        caps = params.get("capabilities")
        self.client_capabilities = caps if isinstance(caps, dict) else {}
        self.requested = params.get("protocolVersion")
        self.client_info = params.get("clientInfo")
        versions = self.mirror.config.versions
        chosen = self.requested if self.requested in versions else versions[0]
        result = {
            "protocolVersion": self.answer_version or chosen,
            "capabilities": dict(self.capabilities),
            "serverInfo": dict(PROBE_INFO),
        }
        if self.answer_version is not None:
            self._write(_dumps({"jsonrpc": "2.0", "id": request.id, "result": result}) + b"\n")
            return
        self._send_reply(Response(id=request.id, result=result))

    def _send_reply(self, reply: Response | ErrorResponse) -> None:
        try:
            data = self.mirror.send(reply)
        except LocalProtocolError:
            return
        if data:
            self._write(data)

    def _violate(self, rule_name: str, message: str, part: str = "receiver") -> None:
        if any(v.rule == rule_name for v in self.violations):
            return  # the first exchange that shows it is the shortest
        self.violations.append(Violation(rule_name, message, tuple(self.lines), part))

    def _die(self, why: str) -> None:
        if not self.dead:
            self.dead = why
            self._record("note", why.encode())

    # -------------------------------------------------------------- the end

    def close(self) -> None:
        """Shut the peer down; what the transport says about its end (an exit status)
        is noted in :attr:`lines`."""
        if self._closed:
            return
        self._closed = True
        with contextlib.suppress(Exception):
            if not self.dead and not self.channel.closed and not self._mirror_broken:
                # Whatever the peer sent before answering this has arrived: a late extra
                # answer is seen by the mirror, every time.
                self.barrier()
            self._pump(lambda: False, 0.0)
        note = self.channel.close()
        if note:
            self._record("note", note.encode())

    def __enter__(self) -> Conversation:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def _notification_method(raw: bytes) -> str | None:
    try:
        value = orjson.loads(raw) if raw else None
    except orjson.JSONDecodeError:
        return None
    if isinstance(value, dict) and "id" not in value and isinstance(value.get("method"), str):
        return value["method"]  # type: ignore[no-any-return]
    return None


def _ids_in(data: bytes) -> list[RequestId]:
    """The request ids a message (or a batch) carries."""
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError:
        return []
    members = value if isinstance(value, list) else [value]
    found: list[RequestId] = []
    for member in members:
        if isinstance(member, dict) and "method" in member:
            rid = member.get("id")
            if type(rid) is int or type(rid) is str:
                found.append(rid)
    return found


def sampled_message() -> dict[str, Any]:
    """The probe's answer to a sampling request: a fixed assistant message."""
    return {
        "role": "assistant",
        "content": {"type": "text", "text": "an answer from the mcp-sansio probe"},
        "model": "mcp-sansio-probe",
        "stopReason": "endTurn",
    }


def _describe(message: Mapping[str, Any]) -> str:
    if "transport" in message:
        return str(message["transport"])
    if "error" in message:
        error = message["error"]
        code = error.get("code") if isinstance(error, dict) else None
        return f"error {code} under id {message.get('id')!r}"
    return f"a result under id {message.get('id')!r}"


def _headerless(data: bytes) -> bool:
    """Whether a 2026-07-28 message's body cannot be mirrored in the standard headers (its
    method, or its ``_meta`` version, is not a string): over HTTP the server may then
    refuse it for its headers (-32020) before it reads the body."""
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError:
        return False
    if not isinstance(value, dict):
        return False
    if not isinstance(value.get("method"), str):
        return True
    params = value.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    return (
        isinstance(meta, dict)
        and _META_VERSION in meta
        and not isinstance(meta[_META_VERSION], str)
    )


def _judge(
    expect: Demand, got: list[Mapping[str, Any]], transport: str, headers_first: bool = False
) -> str | None:
    """What is wrong with the answers ``got`` to a near-miss, or ``None``. With
    ``headers_first``, -32020 is accepted for any error due (see :func:`_headerless`)."""
    http = transport == "http"
    if headers_first and expect.codes:
        expect = attrs.evolve(expect, codes=(*expect.codes, int(ErrorCode.HEADER_MISMATCH)))
    if expect.reply == "none":
        if http:
            # Streamable HTTP lets a server refuse a notification or a response with a 4xx,
            # optionally with an id-less error.
            got = [
                m for m in got if not ("transport" in m or (m.get("id") is None and "error" in m))
            ]
        if got:
            return (
                "answered (" + "; ".join(_describe(m) for m in got) + "); the rule wants no reply"
            )
        return None
    if not got:
        return "no answer"
    if len(got) > 1:
        return f"{len(got)} answers (" + "; ".join(_describe(m) for m in got) + "); one is due"
    answer = got[0]
    if "transport" in answer:
        status = answer.get("status")
        if (
            expect.reply in ("error", "answer")
            and http
            and isinstance(status, int)
            and status >= 400
        ):
            return None  # the HTTP layer refused it, without a JSON-RPC body: allowed
        return f"no JSON-RPC answer ({answer['transport']})"
    rid = answer.get("id")
    if http and expect.reply in ("error", "answer") and rid is None and "error" in answer:
        # The HTTP layer refused the POST with an id-less JSON-RPC error (400 "Missing
        # session ID", ...): as good as a bare 4xx, which the transport allows.
        return None
    if expect.ids and not any(rid == want and type(rid) is type(want) for want in expect.ids):
        wanted = " or ".join("null" if i is None else repr(i) for i in expect.ids)
        return f"{_describe(answer)}; the answer must carry id {wanted}"
    if expect.reply == "error":
        if "error" not in answer:
            return f"answered with a result under id {rid!r}; the rule wants an error"
        error = answer["error"]
        code = error.get("code") if isinstance(error, dict) else None
        if expect.codes and code not in expect.codes:
            wanted = " or ".join(str(c) for c in expect.codes)
            return f"answered error {code}; the rule wants {wanted}"
    elif expect.reply == "result" and "result" not in answer:
        error = answer.get("error")
        detail = f"{error.get('code')} {error.get('message')!r}" if isinstance(error, dict) else ""
        return f"refused a valid message (error {detail})"
    if expect.check is not None:
        return expect.check(answer)
    return None


# ---------------------------------------------------------------------- near-miss builders


class Draw(Protocol):
    """Where a shot builder gets its variations: ``draw(strategy, canonical)`` returns a
    value of ``strategy`` (the fuzz phase) or ``canonical`` (the deterministic checks)."""

    def __call__(self, strategy: st.SearchStrategy[T], canonical: T, /) -> T: ...


def canonical(strategy: st.SearchStrategy[T], value: T, /) -> T:
    """The :data:`Draw` of the deterministic checks: always the canonical choice."""
    return value


#: A shot builder: the near-miss for one rule in the conversation's current state, or why
#: there is none (a string).
Builder = Callable[[Conversation, Draw], "Shot | str"]

_INVALID: Final = int(ErrorCode.INVALID_REQUEST)
_NOT_FOUND: Final = int(ErrorCode.METHOD_NOT_FOUND)
_PARAMS: Final = int(ErrorCode.INVALID_PARAMS)
_ALL_METHODS: Final = frozenset(m for spec in VERSIONS.values() for m in spec.methods)

_BROKEN_JSON: Final = (
    b'{"jsonrpc": "2.0", "id": 1, "method": "ping"',
    b'{"jsonrpc": "2.0", "id": 1, "method": "ping",}',
    b"{'jsonrpc': '2.0', 'id': 1, 'method': 'ping'}",
    b'{"jsonrpc": "2.0", "id": 1, "method": "ping"}}',
    b"\xff\xfe{}",
    b"nul",
    b'{"jsonrpc": "2.0", "id": 01, "method": "ping"}',
)


def _request(
    conv: Conversation, rid: RequestId | None, method: Any, params: Any = None
) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
    if conv.era is Era.STATELESS:
        params = dict(params or {})
        params.setdefault("_meta", conv.meta())
    if params is not None:
        message["params"] = params
    return message


def _barrier_method(conv: Conversation) -> str:
    return "server/discover" if conv.era is Era.STATELESS else "ping"


def _parse_error(conv: Conversation, draw: Draw) -> Shot | str:
    valid = _dumps(_request(conv, 1, _barrier_method(conv)))
    cut = st.integers(1, len(valid) - 1).map(lambda n: valid[:n])
    data = draw(st.sampled_from(_BROKEN_JSON) | cut, _BROKEN_JSON[0])
    return Shot(
        "envelope.parse-error",
        data,
        refusal("envelope.parse-error", (None,)),
        "a line that is not JSON",
    )


_ENVELOPE_FAULTS: Final = (
    "no jsonrpc",
    'jsonrpc "1.0"',
    "method 42",
    "params an array",
    "id null",
    "id 1.5",
    "id true",
    "id an object",
    "not an object",
)


def _invalid_request(conv: Conversation, draw: Draw) -> Shot | str:
    fault = draw(st.sampled_from(_ENVELOPE_FAULTS), _ENVELOPE_FAULTS[0])
    rid = conv.fresh_id()
    message: Any = _request(conv, rid, _barrier_method(conv))
    readable = True
    if fault == "no jsonrpc":
        del message["jsonrpc"]
    elif fault == 'jsonrpc "1.0"':
        message["jsonrpc"] = "1.0"
    elif fault == "method 42":
        message["method"] = 42
    elif fault == "params an array":
        message["params"] = [message.get("params")]
    else:
        readable = False
        if fault == "id null":
            message["id"] = None
        elif fault == "id 1.5":
            message["id"] = 1.5
        elif fault == "id true":
            message["id"] = True
        elif fault == "id an object":
            message["id"] = {"id": rid}
        else:
            message = draw(st.sampled_from([42, "ping", None, True]), 42)
    ids: tuple[RequestId | None, ...] = (rid, None) if readable else (None,)
    due = refusal("envelope.invalid-request", ids)
    if fault == "params an array":
        # JSON-RPC 2.0 allows params by position; MCP's schema has an object: the request
        # is refused, with a code neither text names (-32600 or -32602 are both fair).
        due = attrs.evolve(due, codes=())
    return Shot("envelope.invalid-request", _dumps(message), due, f"a bad envelope ({fault})")


def _batch_not_allowed(conv: Conversation, draw: Draw) -> Shot | str:
    if VERSIONS[conv.version].batches:
        return f"{conv.version} has batches"
    count = draw(st.integers(1, 3), 1)
    members = [_request(conv, conv.fresh_id(), _barrier_method(conv)) for _ in range(count)]
    return Shot(
        "envelope.batch-not-allowed",
        _dumps(members),
        refusal("envelope.batch-not-allowed", (None,)),
        "a JSON array (a batch) where the version has none",
    )


def _empty_batch(conv: Conversation, draw: Draw) -> Shot | str:
    if not VERSIONS[conv.version].batches:
        return f"{conv.version} has no batches"
    return Shot(
        "envelope.empty-batch", b"[]", refusal("envelope.empty-batch", (None,)), "an empty batch"
    )


def _batch_mixed(conv: Conversation, draw: Draw) -> Shot | str:
    if not VERSIONS[conv.version].batches:
        return f"{conv.version} has no batches"
    rid = conv.fresh_id()
    members = [
        _request(conv, rid, "ping"),
        {"jsonrpc": "2.0", "id": conv.fresh_id(), "result": {}},
    ]
    return Shot(
        "envelope.batch-mixed",
        _dumps(draw(st.permutations(members), members)),
        refusal("envelope.batch-mixed", (None,)),
        "a batch mixing a request and a response",
    )


def _invalid_response(conv: Conversation, draw: Draw) -> Shot | str:
    rid = conv.fresh_id()
    faults: list[dict[str, Any]] = [
        {"jsonrpc": "2.0", "id": rid, "result": {}, "error": {"code": -1, "message": "x"}},
        {"jsonrpc": "2.0", "id": rid, "result": 42},
        {"jsonrpc": "2.0", "id": rid, "error": {"message": "no code"}},
        {"jsonrpc": "2.0", "result": {}},
    ]
    return Shot(
        "envelope.invalid-response",
        _dumps(draw(st.sampled_from(faults), faults[0])),
        Demand("none"),
        "a malformed response",
    )


def _second_initialize(conv: Conversation, draw: Draw) -> Shot | str:
    if conv.era is Era.STATELESS:
        return "2026-07-28 has no initialize"
    if conv.negotiated is None:
        return "the session is not initialized"
    rid = conv.fresh_id()
    message = _request(conv, rid, "initialize", conv.initialize_params(conv.negotiated))
    return Shot(
        "lifecycle.second-initialize",
        _dumps(message),
        refusal("lifecycle.second-initialize", (rid,)),
        "initialize again, in an initialized session",
    )


def _duplicate_id(conv: Conversation, draw: Draw) -> Shot | str:
    if conv.era is Era.STATELESS:
        return "2026-07-28 ids may be reused once answered (in-flight reuse is not probed)"
    used = [key[1] for key, answers in conv._answers.items() if answers]
    if not used:
        return "no request answered yet"
    rid = draw(st.sampled_from(used), used[-1])
    return Shot(
        "ids.duplicate-request-id",
        _dumps(_request(conv, rid, "ping")),
        refusal("ids.duplicate-request-id", (rid,)),
        f"ping reusing id {rid!r} of an answered request",
    )


def _string_int_ids(conv: Conversation, draw: Draw) -> Shot | str:
    if conv.era is Era.STATELESS:
        return "not probed in 2026-07-28"
    used = [key[1] for key, answers in conv._answers.items() if answers and key[0] == "int"]
    taken = {key[1] for key in (*conv._answers, *conv.used_ids) if key[0] == "str"}
    used = [n for n in used if str(n) not in taken]
    if not used:
        return "no integer id answered yet"
    rid = str(draw(st.sampled_from(used), used[-1]))
    return Shot(
        "ids.string-and-int-are-different",
        _dumps(_request(conv, rid, "ping")),
        Demand("result", (), (rid,)),
        f"ping with id {rid!r}, the string of an integer id already used",
    )


def _unknown_response(conv: Conversation, draw: Draw) -> Shot | str:
    rid = conv.fresh_id()
    bodies: list[dict[str, Any]] = [
        {"result": {}},
        {"error": {"code": -32603, "message": "stray"}},
    ]
    body = draw(st.sampled_from(bodies), bodies[0])
    return Shot(
        "response.unknown-id",
        _dumps({"jsonrpc": "2.0", "id": rid, **body}),
        Demand("none"),
        "a response to a request never sent",
    )


#: Plausible params of the gated requests, for the capability and direction near-misses.
_PLAUSIBLE: Final[Mapping[str, Mapping[str, Any]]] = {
    "resources/read": {"uri": "test://probe"},
    "resources/subscribe": {"uri": "test://probe"},
    "resources/unsubscribe": {"uri": "test://probe"},
    "prompts/get": {"name": "probe"},
    "tools/call": {"name": "probe", "arguments": {}},
    "logging/setLevel": {"level": "info"},
    "completion/complete": {
        "ref": {"type": "ref/prompt", "name": "probe"},
        "argument": {"name": "a", "value": ""},
    },
    "tasks/get": {"taskId": "probe"},
    "tasks/result": {"taskId": "probe"},
    "tasks/cancel": {"taskId": "probe"},
    "sampling/createMessage": {
        "messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}],
        "maxTokens": 1,
    },
    "elicitation/create": {
        "message": "hi",
        "requestedSchema": {"type": "object", "properties": {}},
    },
}


#: The direction of the requests each role receives.
_TO: Final = {Role.SERVER: Direction.CLIENT_TO_SERVER, Role.CLIENT: Direction.SERVER_TO_CLIENT}


def _undeclared(conv: Conversation, draw: Draw) -> Shot | str:
    peer = conv.peer.value
    caps = conv.server_capabilities if conv.peer is Role.SERVER else conv.client_capabilities
    if caps is None:
        return f"the {peer}'s capabilities are not known"
    spec = VERSIONS[conv.version]
    methods = sorted(
        name
        for name, r in spec.methods.items()
        if r.kind is Kind.REQUEST
        and r.direction is _TO[conv.peer]
        and r.gate
        and not capability_met(caps, r.gate)
    )
    if not methods:
        return f"the {peer} declares every capability that gates a request"
    method = draw(st.sampled_from(methods), methods[0])
    rid = conv.fresh_id()
    return Shot(
        f"capability.undeclared-{peer}-capability",
        _dumps(_request(conv, rid, method, dict(_PLAUSIBLE.get(method, {})))),
        refusal(f"capability.undeclared-{peer}-capability", (rid,)),
        f"{method}, whose capability the {peer} did not declare",
    )


_NAME_ALPHABET: Final = string.ascii_letters + string.digits + "/_-."


def _unknown_method(conv: Conversation, draw: Draw) -> Shot | str:
    names = st.text(_NAME_ALPHABET, min_size=1, max_size=24).filter(lambda m: m not in _ALL_METHODS)
    method = draw(names, "probe/no-such-method")
    rid = conv.fresh_id()
    return Shot(
        "method.unknown",
        _dumps(_request(conv, rid, method)),
        refusal("method.unknown", (rid,)),
        f"a request for an unknown method {method!r}",
    )


def _unknown_notification(conv: Conversation, draw: Draw) -> Shot | str:
    names = st.text(_NAME_ALPHABET, min_size=1, max_size=24).filter(lambda m: m not in _ALL_METHODS)
    method = draw(names.map(lambda m: "notifications/" + m), "notifications/probe/no-such")
    return Shot(
        "method.unknown-notification",
        _dumps({"jsonrpc": "2.0", "method": method}),
        Demand("none"),
        f"an unknown notification {method!r}",
    )


def _wrong_direction(conv: Conversation, draw: Draw) -> Shot | str:
    spec = VERSIONS[conv.version]
    other = conv.peer.peer  # the role that sends these requests: not the peer's to receive
    methods = sorted(
        name
        for name, r in spec.methods.items()
        if r.kind is Kind.REQUEST and r.direction is _TO[other] and name != "initialize"
    )
    if not methods:
        return f"{conv.version} has no request only a {conv.peer.value} sends"
    preferred = "tools/list" if "tools/list" in methods else methods[0]
    method = draw(st.sampled_from(methods), preferred)
    rid = conv.fresh_id()
    return Shot(
        "method.wrong-direction",
        _dumps(_request(conv, rid, method, dict(_PLAUSIBLE.get(method, {})) or None)),
        refusal("method.wrong-direction", (rid,)),
        f"{method}, a request only a {conv.peer.value} sends",
    )


def _invalid_params(conv: Conversation, draw: Draw) -> Shot | str:
    options = (_client_params if conv.peer is Role.CLIENT else _server_params)(conv, draw)
    if not options:
        return f"no request of the {conv.peer.value}'s whose params the probe can break"
    method, params = draw(st.sampled_from(options), options[0])
    rid = conv.fresh_id()
    return Shot(
        "params.invalid",
        _dumps(_request(conv, rid, method, params)),
        refusal("params.invalid", (rid,)),
        f"{method} with invalid params",
    )


def _server_params(conv: Conversation, draw: Draw) -> list[tuple[str, dict[str, Any]]]:
    """Requests to a server, with broken params."""
    caps = conv.server_capabilities or {}
    options: list[tuple[str, dict[str, Any]]] = []
    if conv.era is Era.INITIALIZE and capability_met(caps, ("logging",)):
        level = draw(st.sampled_from([42, "loud", None, ["info"]]), "loud")
        options.append(("logging/setLevel", {"level": level}))
    if conv.era is Era.INITIALIZE and capability_met(caps, ("resources", "subscribe")):
        options.append(("resources/subscribe", {"uri": draw(st.sampled_from([42, None]), 42)}))
    if conv.era is Era.STATELESS:
        bad = draw(st.sampled_from(["all", 42, None, ["toolsListChanged"]]), "all")
        options.append(("subscriptions/listen", {"notifications": bad}))
    if capability_met(caps, ("tools",)):
        options.append(("tools/call", {"arguments": {}}))
    return options


def _client_params(conv: Conversation, draw: Draw) -> list[tuple[str, dict[str, Any]]]:
    """Requests to a client, of the capabilities it declared, with broken params."""
    caps = conv.client_capabilities or {}
    options: list[tuple[str, dict[str, Any]]] = []
    if capability_met(caps, ("sampling",)):
        sampling = dict(_PLAUSIBLE["sampling/createMessage"])
        broken = draw(st.sampled_from(["no maxTokens", "maxTokens a string"]), "no maxTokens")
        if broken == "no maxTokens":
            del sampling["maxTokens"]
        else:
            sampling["maxTokens"] = "ten"
        options.append(("sampling/createMessage", sampling))
    if VERSIONS[conv.version].methods.get("elicitation/create") and capability_met(
        caps, ("elicitation",)
    ):
        options.append(("elicitation/create", {"requestedSchema": {"type": "object"}}))
    return options


def _unknown_token(conv: Conversation, draw: Draw) -> Shot | str:
    if conv.era is Era.STATELESS:
        return "in 2026-07-28 only the server sends progress"
    token = draw(st.integers(0, 2**31) | st.text(max_size=8), "probe-token")
    return Shot(
        "progress.unknown-token",
        _dumps(
            {
                "jsonrpc": "2.0",
                "method": "notifications/progress",
                "params": {"progressToken": token, "progress": 1},
            }
        ),
        Demand("none"),
        "progress for a token no request of the receiver's carries",
    )


#: The list-changed notifications each role sends, and the capability that gates each (the
#: first of a role is the canonical near miss).
_LIST_CHANGED: Final[Mapping[Role, tuple[tuple[str, tuple[str, ...]], ...]]] = {
    Role.CLIENT: (("notifications/roots/list_changed", ("roots", "listChanged")),),
    Role.SERVER: (
        ("notifications/tools/list_changed", ("tools", "listChanged")),
        ("notifications/prompts/list_changed", ("prompts", "listChanged")),
        ("notifications/resources/list_changed", ("resources", "listChanged")),
    ),
}


def _undeclared_notification(conv: Conversation, draw: Draw) -> Shot | str:
    methods = VERSIONS[conv.version].methods
    options = [
        (method, gate)
        for method, gate in _LIST_CHANGED[conv.peer.peer]
        if method in methods and not capability_met(conv.capabilities, gate)
    ]
    if not options:
        return f"{conv.version}: the probe declared every list-changed it may send, or has none"
    method, gate = draw(st.sampled_from(options), options[0])
    return Shot(
        "capability.undeclared-notification",
        _dumps({"jsonrpc": "2.0", "method": method}),
        Demand("none"),
        f"{method} without declaring {'.'.join(gate)}",
    )


def _unknown_cancel(conv: Conversation, draw: Draw) -> Shot | str:
    if conv.era is Era.STATELESS and conv.transport == "http":
        return "2026-07-28 over HTTP cancels by closing the stream"
    target: Any = draw(st.sampled_from(["unknown", "answered", "malformed"]), "unknown")
    if target == "answered":
        answered = [key[1] for key, answers in conv._answers.items() if answers]
        rid: Any = answered[-1] if answered else conv.fresh_id()
    elif target == "malformed":
        rid = draw(st.sampled_from([None, 1.5, {"id": 1}]), None)
    else:
        rid = conv.fresh_id()
    return Shot(
        "cancel.unknown-request",
        _dumps(
            {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": rid}}
        ),
        Demand("none"),
        f"a cancel naming no request in flight ({target})",
    )


def _missing_meta(conv: Conversation, draw: Draw) -> Shot | str:
    if conv.era is not Era.STATELESS:
        return "only 2026-07-28 has request _meta"
    rid = conv.fresh_id()
    variant = draw(
        st.sampled_from(["no params", "no _meta", "no version", "version 42"]), "no _meta"
    )
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": "server/discover"}
    if variant == "no _meta":
        message["params"] = {}
    elif variant == "no version":
        message["params"] = {"_meta": conv.meta(version=None)}
    elif variant == "version 42":
        message["params"] = {"_meta": conv.meta(version=42)}
    due = refusal("meta.missing", (rid,))
    if variant in ("no params", "no _meta"):
        # Without _meta the request names no era: a server that speaks the initialize era
        # too may take it as that era's request before initialize, which it may refuse with
        # any error.
        due = attrs.evolve(due, codes=())
    return Shot(
        "meta.missing",
        _dumps(message),
        due,
        f"server/discover with {variant}",
    )


def _unsupported_version(conv: Conversation, draw: Draw) -> Shot | str:
    if conv.era is not Era.STATELESS:
        return "only 2026-07-28 has request _meta"
    rid = conv.fresh_id()
    version = draw(
        st.sampled_from(["1999-01-01", "2099-12-31", "2026-07-29", "latest"]), "1999-01-01"
    )
    message = {
        "jsonrpc": "2.0",
        "id": rid,
        "method": "server/discover",
        "params": {"_meta": conv.meta(version=version)},
    }

    def check(answer: Mapping[str, Any]) -> str | None:
        data = answer["error"].get("data")
        if not isinstance(data, dict) or not isinstance(data.get("supported"), list):
            return "the -32022 error lacks data.supported (a list of versions)"
        if data.get("requested") != version:
            return f"data.requested is {data.get('requested')!r}, not {version!r}"
        return None

    return Shot(
        "meta.unsupported-version",
        _dumps(message),
        refusal("meta.unsupported-version", (rid,), check),
        f"a request for protocol version {version!r}",
    )


def _missing_capabilities(conv: Conversation, draw: Draw) -> Shot | str:
    if conv.era is not Era.STATELESS:
        return "only 2026-07-28 has request _meta"
    rid = conv.fresh_id()
    values: list[Any] = [None, "none", []]
    value = draw(st.sampled_from(values), None)
    meta = conv.meta(capabilities=None)
    if value is not None:
        meta[_META_CAPABILITIES] = value
    return Shot(
        "meta.capabilities-missing",
        _dumps(
            {"jsonrpc": "2.0", "id": rid, "method": "server/discover", "params": {"_meta": meta}}
        ),
        refusal("meta.capabilities-missing", (rid,)),
        "a request without clientCapabilities in _meta",
    )


#: The near-miss builders, by rule: what :func:`shot_builders` returns.
_BUILDERS: Final[Mapping[str, Builder]] = {
    "envelope.parse-error": _parse_error,
    "envelope.invalid-request": _invalid_request,
    "envelope.invalid-response": _invalid_response,
    "envelope.batch-not-allowed": _batch_not_allowed,
    "envelope.empty-batch": _empty_batch,
    "envelope.batch-mixed": _batch_mixed,
    "lifecycle.second-initialize": _second_initialize,
    "ids.duplicate-request-id": _duplicate_id,
    "ids.string-and-int-are-different": _string_int_ids,
    "response.unknown-id": _unknown_response,
    "capability.undeclared-server-capability": _undeclared,
    "capability.undeclared-notification": _undeclared_notification,
    "method.unknown": _unknown_method,
    "method.unknown-notification": _unknown_notification,
    "method.wrong-direction": _wrong_direction,
    "params.invalid": _invalid_params,
    "progress.unknown-token": _unknown_token,
    "cancel.unknown-request": _unknown_cancel,
    "meta.missing": _missing_meta,
    "meta.unsupported-version": _unsupported_version,
    "meta.capabilities-missing": _missing_capabilities,
}


# -- the near-misses a server sends to a client under test


def _undeclared_subcapability(conv: Conversation, draw: Draw) -> Shot | str:
    caps = conv.client_capabilities or {}
    spec = VERSIONS[conv.version]
    options: list[tuple[str, dict[str, Any], str]] = []
    if spec.elicitation_modes and capability_met(caps, ("elicitation",)):
        declared = caps.get("elicitation") or {}
        # An empty elicitation object declares form mode only.
        if not capability_met(declared, ("url",)):
            params: dict[str, Any] = {
                "mode": "url",
                "message": "hi",
                "url": "https://example.com/probe",
                "elicitationId": "probe",
            }
            options.append(("elicitation/create", params, "URL-mode elicitation"))
    if (
        spec.sampling_tools
        and capability_met(caps, ("sampling",))
        and not capability_met(caps, ("sampling", "tools"))
    ):
        sampling: dict[str, Any] = dict(_PLAUSIBLE["sampling/createMessage"])
        sampling["tools"] = [{"name": "probe", "inputSchema": {"type": "object"}}]
        options.append(("sampling/createMessage", sampling, "sampling with tools"))
    if not options:
        return "the client declares every sub-capability the probe can ask for"
    method, params, what = draw(st.sampled_from(options), options[0])
    rid = conv.fresh_id()
    due = refusal("capability.undeclared-client-subcapability", (rid,))
    if method == "sampling/createMessage":
        # The -32602 sentence is elicitation's; for sampling with tools the text asks for
        # an error without naming its code.
        due = attrs.evolve(due, codes=())
    return Shot(
        "capability.undeclared-client-subcapability",
        _dumps(_request(conv, rid, method, params)),
        due,
        f"{what}, which the client did not declare",
    )


def _updated_not_subscribed(conv: Conversation, draw: Draw) -> Shot | str:
    uri = draw(st.sampled_from(["test://probe/never-subscribed", "file:///probe"]), "test://probe")
    return Shot(
        "resources.updated-not-subscribed",
        _dumps(
            {"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": {"uri": uri}}
        ),
        Demand("none"),
        f"resources/updated for {uri!r}, never subscribed to",
    )


#: The near-miss builders fired at a client, by rule: what :func:`client_shot_builders`
#: returns (the envelope, id, method and notification ones are the same both ways).
_CLIENT_BUILDERS: Final[Mapping[str, Builder]] = {
    **{
        name: _BUILDERS[name]
        for name in (
            "envelope.parse-error",
            "envelope.invalid-request",
            "envelope.invalid-response",
            "envelope.batch-not-allowed",
            "envelope.empty-batch",
            "envelope.batch-mixed",
            "ids.duplicate-request-id",
            "ids.string-and-int-are-different",
            "response.unknown-id",
            "method.unknown",
            "method.unknown-notification",
            "progress.unknown-token",
            "cancel.unknown-request",
        )
    },
    "capability.undeclared-client-capability": _undeclared,
    "capability.undeclared-client-subcapability": _undeclared_subcapability,
    "capability.undeclared-notification": _undeclared_notification,
    "resources.updated-not-subscribed": _updated_not_subscribed,
    "method.wrong-direction": _wrong_direction,
    "params.invalid": _invalid_params,
}


def client_shot_builders() -> Mapping[str, Builder]:
    """The near-miss builders fired at a client under test (the probe plays its server),
    by the rule each one tests; called like those of :func:`shot_builders`, with a
    :class:`Conversation` whose peer is a client."""
    return _CLIENT_BUILDERS


def shot_builders() -> Mapping[str, Builder]:
    """The near-miss builders, by the rule each one tests. Each is called with an open
    :class:`Conversation` and a :data:`Draw`, and returns a :class:`Shot`, or a string
    saying why the rule does not apply in that conversation."""
    return _BUILDERS


# ---------------------------------------------------------------------- scripted near-misses


def agrees(nm: Any, capabilities: Mapping[str, Any], versions: Sequence[str] | None = None) -> bool:
    """Whether our own :class:`~mcp_sansio.Connection`, as a server of ``versions``
    (default: ``nm``'s version only) with ``capabilities`` (the live server's), finds
    that ``nm`` (a :class:`~mcp_sansio.testing.NearMiss`) breaks its rule the way the
    rule says: the scripts assume a server of one version with the capabilities they
    declare, and against a live server that has others they may mean something else."""
    live = dict(capabilities)
    exchange = []
    for line in nm.exchange:
        # The script's initialize result declares the script's capabilities: the live
        # server's are what count.
        value = orjson.loads(line.data) if line.sender is not nm.sender else None
        if not isinstance(value, dict):
            exchange.append(line)
            continue
        result = value.get("result")
        if isinstance(result, dict) and "protocolVersion" in result and "capabilities" in result:
            data = _dumps({**value, "result": {**result, "capabilities": live}}) + b"\n"
            line = attrs.evolve(line, data=data)
        exchange.append(line)
    try:
        script = attrs.evolve(nm, exchange=tuple(exchange))
        config: dict[str, Any] = {"capabilities": live}
        if versions:
            config["versions"] = tuple(versions)
        events = script.play(script.connection(**config))
    except Exception:  # a script our Connection refuses with these capabilities
        return False
    replies = [e for e in events if isinstance(e, InvalidMessage) and e.reply is not None]
    accepted = [e for e in events if isinstance(e, Request)]
    reply = nm.expect.reply
    if reply == "error":
        code = nm.expect.code
        return len(replies) == 1 and not accepted and (code is None or replies[0].code == code)
    if reply == "none":
        return not replies and not accepted
    if reply == "result":
        return len(accepted) == 1 and not replies
    return False


def replay(
    target: Target,
    nm: Any,
    *,
    timeout: float = DEFAULT_TIMEOUT,
    startup: float = DEFAULT_STARTUP,
) -> tuple[str | None, tuple[WireLine, ...]]:
    """Play a :class:`~mcp_sansio.testing.NearMiss` (client side) against a fresh peer of
    ``target``: the client's lines of its exchange (each request waited for), then its
    message, then a ``ping`` / ``server/discover`` to make sure the peer has read it.
    Returns what is wrong with the peer's replies (``nm.expect.check``), or ``None``, and
    the exchange. A setup the peer does not answer is not judged (``None``)."""
    http = target.transport == "http"
    if http and nm.rule == "ids.duplicate-request-id" and VERSIONS[nm.version].era is Era.STATELESS:
        # Over HTTP each request has its own stream: an answer cannot be mistaken for
        # another request's, which is what the rule is for.
        return None, ()
    if http and VERSIONS[nm.version].era is Era.INITIALIZE:
        first = next((line for line in nm.exchange if line.sender is nm.sender), None)
        if first is None or _method_of(first.data) != "initialize":
            # Before initialize, an HTTP request carries nothing that names its era: a
            # server of both eras may take it for 2026-07-28 (the checks allow for that).
            return None, ()
    channel = target.open()
    lines: list[WireLine] = []
    values: list[Any] = []
    started = False

    def send(data: bytes) -> None:
        lines.append(WireLine("probe", data.rstrip(b"\n")))
        channel.send(data)

    def is_answer(v: Any) -> bool:
        return isinstance(v, dict) and "method" not in v and ("result" in v or "error" in v)

    def answered(rid: Any, since: int) -> bool:
        return any(
            is_answer(v) and type(v.get("id")) is type(rid) and v.get("id") == rid
            for v in values[since:]
        )

    def acked(rid: Any, since: int) -> bool:
        """A listen's acknowledgement (or its answer) arrived."""
        for v in values[since:]:
            params = v.get("params") if isinstance(v, dict) else None
            meta = params.get("_meta") if isinstance(params, dict) else None
            if (
                isinstance(meta, dict)
                and v.get("method") == "notifications/subscriptions/acknowledged"
                and meta.get("io.modelcontextprotocol/subscriptionId") == rid
            ):
                return True
        return answered(rid, since)

    def pump(done: Callable[[], bool], limit: float) -> bool:
        nonlocal started
        if not started:
            limit = max(limit, startup)
            started = True
        deadline = time.monotonic() + limit
        while not done():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            item = channel.receive(min(remaining, 0.5))
            if item is None:
                if channel.closed:
                    return done()
                continue
            if not item.data:
                lines.append(WireLine("note", item.note.encode()))
                if item.overflow:
                    return False
                continue
            lines.append(WireLine("peer", item.data))
            try:
                value = orjson.loads(item.data)
            except orjson.JSONDecodeError:
                value = None
            values.extend(value if isinstance(value, list) else [value])
        return True

    try:
        for line in nm.exchange:
            if line.sender is not nm.sender:
                continue  # what a conforming peer answers: not sent, not compared
            since = len(values)
            send(line.data)
            obj = line.json()
            request = isinstance(obj, dict) and "method" in obj and "id" in obj
            if request and obj["method"] == "subscriptions/listen":
                done: Callable[[], bool] = functools.partial(acked, obj["id"], since)
            else:
                done = functools.partial(answered, obj.get("id"), since)
            if request and not pump(done, timeout):
                return None, tuple(lines)
        since = len(values)
        send(nm.message)
        era = VERSIONS[nm.version].era
        barrier: dict[str, Any] = {"jsonrpc": "2.0", "id": "probe-barrier", "method": "ping"}
        if era is Era.STATELESS:
            barrier["method"] = "server/discover"
            barrier["params"] = {
                "_meta": {
                    _META_VERSION: nm.version,
                    _META_CAPABILITIES: {},
                    _META_CLIENT_INFO: dict(PROBE_INFO),
                }
            }

        def replied() -> bool:
            return any(is_answer(v) and v.get("id") != "probe-barrier" for v in values[since:])

        due = nm.expect.reply in ("error", "result")
        if due:
            pump(replied, min(timeout, FIRST_WAIT))
        mark = len(values)
        send(_dumps(barrier))
        alive = pump(lambda: answered("probe-barrier", mark), timeout)
        if due and alive and not replied():
            pump(replied, min(timeout, GRACE))
        replies = [
            v
            for v in values[since:]
            if not (isinstance(v, dict) and v.get("id") == "probe-barrier")
        ]
        if http and nm.expect.reply == "none":
            # Streamable HTTP lets a server refuse a notification or response with a 4xx
            # and an id-less error.
            replies = [v for v in replies if not (isinstance(v, dict) and v.get("id") is None)]
        problem = nm.expect.check(replies)
        if problem is not None and http and nm.expect.reply == "error" and len(replies) == 1:
            # The HTTP layer refused the POST with an id-less JSON-RPC error: as good as a
            # bare 4xx (the deterministic check takes it the same way, see _judge).
            only = replies[0]
            if isinstance(only, dict) and only.get("id") is None and "error" in only:
                problem = None
        if problem is not None and http and _headerless(nm.message):
            codes = {
                v["error"].get("code")
                for v in replies
                if isinstance(v, dict) and isinstance(v.get("error"), dict)
            }
            if codes == {int(ErrorCode.HEADER_MISMATCH)} and len(replies) == 1:
                problem = None  # refused for its headers, before its body was read
        if problem is None and not alive:
            problem = "the peer stopped answering after this message"
        return problem, tuple(lines)
    finally:
        note = channel.close()
        if note:
            lines.append(WireLine("note", note.encode()))


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


def _method_of(data: bytes) -> Any:
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError:
        return None
    return value.get("method") if isinstance(value, dict) else None


def _known_rules() -> frozenset[str]:
    from mcp_sansio.testing._rules import RULES

    return frozenset(RULES)


@functools.cache
def _scripts(version: str, rules: frozenset[str] | None) -> st.SearchStrategy[Any] | None:
    """The scripted near-misses of ``version`` (client to server) without those whose
    expectation a live server cannot show (``"close"``)."""
    from mcp_sansio.testing._near_miss import near_misses
    from mcp_sansio.testing._rules import RULES

    names = [
        name
        for name, r in RULES.items()
        if r.applies(version, Role.SERVER)
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
        known = set(_BUILDERS) | set(_CLIENT_BUILDERS) | set(_known_rules())
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
        if conv.era is Era.STATELESS:
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
        builders = _CLIENT_BUILDERS if conv.peer is Role.CLIENT else _BUILDERS
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
        if nm.expect.reply == "result" and _method_of(nm.message) not in _PROTOCOL_ANSWERED:
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
        if not methods or (conv.era is Era.STATELESS and conv.transport == "http"):
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
