"""What crossed the wire, and what is demanded of a peer.

:class:`WireLine` is one line of an exchange as a report shows it (:func:`collapse` folds
repeats); :class:`Violation` and :class:`PeerViolation` name a rule a peer broke, with the
exchange that shows it; a :class:`Shot` is one near-miss message with the answer the rule
demands (:class:`Demand`, :func:`refusal`); :func:`classify` names the rule behind a
refusal of our own :class:`~mcp_sansio.Connection`. Also the probe's defaults and bounds.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar, Final, TypeVar

import attrs
import orjson

from mcp_sansio._connection import META_VERSION
from mcp_sansio._errors import ErrorCode
from mcp_sansio._events import (
    RequestId,
)
from mcp_sansio._version import __version__
from mcp_sansio.testing._rules import OTHER_RULE

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


def id_key(value: Any) -> tuple[str, Any]:
    """An id as a dict key that tells ``1`` from ``"1"``."""
    return (type(value).__name__, value)


def dumps(value: Any) -> bytes:
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


def notification_method(raw: bytes) -> str | None:
    try:
        value = orjson.loads(raw) if raw else None
    except orjson.JSONDecodeError:
        return None
    if isinstance(value, dict) and "id" not in value and isinstance(value.get("method"), str):
        return value["method"]  # type: ignore[no-any-return]
    return None


def ids_in(data: bytes) -> list[RequestId]:
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


def describe(message: Mapping[str, Any]) -> str:
    if "transport" in message:
        return str(message["transport"])
    if "error" in message:
        error = message["error"]
        code = error.get("code") if isinstance(error, dict) else None
        return f"error {code} under id {message.get('id')!r}"
    return f"a result under id {message.get('id')!r}"


def headerless(data: bytes) -> bool:
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
        isinstance(meta, dict) and META_VERSION in meta and not isinstance(meta[META_VERSION], str)
    )


def judge(
    expect: Demand, got: list[Mapping[str, Any]], transport: str, headers_first: bool = False
) -> str | None:
    """What is wrong with the answers ``got`` to a near-miss, or ``None``. With
    ``headers_first``, -32020 is accepted for any error due (see :func:`headerless`)."""
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
            return "answered (" + "; ".join(describe(m) for m in got) + "); the rule wants no reply"
        return None
    if not got:
        return "no answer"
    if len(got) > 1:
        return f"{len(got)} answers (" + "; ".join(describe(m) for m in got) + "); one is due"
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
        return f"{describe(answer)}; the answer must carry id {wanted}"
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


def method_of(data: bytes) -> Any:
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError:
        return None
    return value.get("method") if isinstance(value, dict) else None
