"""The model of the table of refusals (:mod:`mcp_sansio.testing._refusals`): a
:class:`Refusal` (one kind of message of the peer's the :class:`~mcp_sansio.Connection`
refuses, the answer, the sentences it rests on and their level) and the :class:`Example`
that shows it on a real pair of Connections (``tests/test_refusals.py`` runs every one).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, Literal

import attrs

from mcp_sansio._state import Role
from mcp_sansio.testing._rule_model import Citation, Level
from mcp_sansio.testing._rules import RULES

__all__ = [
    "ANY_ID",
    "Example",
    "Outcome",
    "Refusal",
    "Step",
    "Why",
    "cite",
    "meta",
]

#: What the receiver's ``next_event()`` gives for the offending line: ``"reply"`` (an
#: :class:`~mcp_sansio.InvalidMessage` with a reply, the error to send), ``"dropped"`` (one
#: without a reply), ``"ignored"`` (no event at all), ``"fatal"``
#: (:class:`~mcp_sansio.RemoteProtocolError`).
Outcome = Literal["reply", "dropped", "ignored", "fatal"]

#: Why the message is refused (docs/connection.rst explains each): the peer breaks a MUST
#: or MUST NOT; the message is not what the schema or JSON-RPC defines; the text asks the
#: receiver for this answer; the Connection cannot check or track the message; the peer
#: breaks only a SHOULD of its own or a lower-case "should" (refused only under strict).
Why = Literal["MUST", "schema", "receiver", "integrity", "strict"]

#: One message sent through the pair before the offending line: who sends it (with
#: ``send()``: it must be valid) and the message, ``{"id", "method", "params"}`` for a
#: request, ``{"method", "params"}`` for a notification, ``{"id", "result"}`` for a result.
Step = tuple[Role, Mapping[str, Any]]

#: :attr:`Example.reply_id` when the reply's id is not checked.
ANY_ID: Final = "<any id>"

_META_VERSION: Final = "io.modelcontextprotocol/protocolVersion"
_META_CAPABILITIES: Final = "io.modelcontextprotocol/clientCapabilities"
_META_CLIENT_INFO: Final = "io.modelcontextprotocol/clientInfo"


def meta(capabilities: Mapping[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    """A 2026-07-28 request ``_meta``, as a raw peer writes it (``extra``: more keys, by
    their names with ``io.modelcontextprotocol/`` left out)."""
    out: dict[str, Any] = {
        _META_VERSION: "2026-07-28",
        _META_CAPABILITIES: dict(capabilities or {}),
        _META_CLIENT_INFO: {"name": "refusal-client", "version": "1"},
    }
    out.update({f"io.modelcontextprotocol/{k}": v for k, v in extra.items()})
    return out


def cite(rule: str, *parts: str) -> tuple[Citation, ...]:
    """The citations of the probe rule named ``rule`` (``RULES``) whose text contains one of
    ``parts`` (all of them when none is given): the same sentences, the same objects."""
    found = tuple(c for c in RULES[rule].citations if not parts or any(p in c.text for p in parts))
    if not found:
        raise LookupError(f"{rule}: no citation contains {parts!r}")
    return found


@attrs.frozen
class Example:
    """One run of a refusal on a pair of Connections: ``tests/test_refusals.py`` builds a
    client and a server of :attr:`version` (the initialize era: through
    :attr:`handshake` of the three opening messages; 2026-07-28: a client of that version
    only, or one that learned the server by ``server/discover``), sends :attr:`lead`
    through them, writes :attr:`line` into the :attr:`receiver`, and checks what its
    ``next_event()`` gives."""

    version: str
    """The protocol version the pair speaks."""
    receiver: Role
    """The side that reads the offending line."""
    line: Any
    """The offending line: a JSON-shaped value (written as one JSON line) or bytes (written
    as they are, a newline added unless :attr:`eof`)."""
    outcome: Outcome
    """What ``next_event()`` gives (see :data:`Outcome`); under the default
    :class:`~mcp_sansio.Config` and under ``strict=True`` alike, unless
    :attr:`strict_only`."""
    code: int | None = None
    """The error code of the :class:`~mcp_sansio.InvalidMessage` (``None``: not checked)."""
    reply_id: Any = ANY_ID
    """The id the reply goes to (``ANY_ID``: not checked)."""
    lead: tuple[Step, ...] = ()
    """What is sent through the pair first (see :data:`Step`)."""
    handshake: int = 3
    """Initialize era: how many of ``initialize``, its result and
    ``notifications/initialized`` went through first."""
    client_capabilities: Mapping[str, Any] = attrs.field(factory=dict)
    """The client's capabilities."""
    server_capabilities: Mapping[str, Any] = attrs.field(factory=dict)
    """The server's capabilities."""
    config: Mapping[str, Any] = attrs.field(factory=dict)
    """More :class:`~mcp_sansio.Config` of the receiver's (``max_message_size``, …)."""
    receiver_versions: tuple[str, ...] | None = None
    """The versions the receiver speaks, when not :attr:`version` alone."""
    eof: bool = False
    """The peer closes right after the line (a line cut short)."""
    strict_only: bool = False
    """Accepted by default (an event that is no :class:`~mcp_sansio.InvalidMessage`);
    :attr:`outcome` only under ``Config(strict=True)``."""


@attrs.frozen
class Refusal:
    """One kind of message of the peer's that the Connection refuses."""

    group: str
    """The table it is listed in (docs/connection.rst)."""
    sends: str
    """What the peer sends (reStructuredText)."""
    answer: str
    """What the Connection answers (reStructuredText)."""
    citations: tuple[Citation, ...]
    """The sentences the refusal rests on, quoted (none when the text is silent)."""
    levels: tuple[Level, ...]
    """The level of each sentence as the text states it (``"implied"``: the schema or
    JSON-RPC without a sentence; ``"ours"``: the text is silent)."""
    why: tuple[Why, ...]
    """Why it is refused (see :data:`Why`)."""
    examples: tuple[Example, ...]
    """Runs on a real pair of Connections that show it."""
    note: str = ""
    """What the sentences alone do not say (reStructuredText), e.g. whose duty it is."""
