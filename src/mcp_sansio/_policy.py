"""What differs between the eras of MCP, as data: :class:`EraPolicy`, one per era (and one
for a side of both eras that has not chosen yet).

Each :class:`~mcp_sansio.VersionSpec` points to its era's policy; the code reads these fields
where the behaviour differs, instead of comparing eras or version strings. A plain class in
the compiled core (mypyc reads its fields directly on the hot path).
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from typing import Any, Final

from ._names import INITIALIZE, LOGGING_SET_LEVEL, RESOURCES_SUBSCRIBE, RESOURCES_UNSUBSCRIBE

__all__ = ["POLICIES", "UNDECIDED", "Era", "EraPolicy"]


class Era(enum.Enum):
    """The two eras of MCP."""

    INITIALIZE = "initialize"
    """2024-11-05 to 2025-11-25: an ``initialize`` handshake opens a session."""
    STATELESS = "stateless"
    """2026-07-28: no handshake; every request carries its version and capabilities."""


class EraPolicy:
    """What differs between the eras, as data. ``UNDECIDED`` is the policy of a side that
    speaks both eras before the first exchange has chosen one."""

    __slots__ = (
        "cache_hints",
        "cancel_ends_listen",
        "effectful",
        "era",
        "handshake",
        "http_cancel_closes_stream",
        "ids_unique_per_session",
        "listen_streams",
        "log_level_in_meta",
        "probe",
        "request_meta",
        "result_type",
        "server_requests",
        "session_header",
        "standard_headers",
    )

    def __init__(
        self,
        *,
        era: Era | None,
        handshake: bool,
        probe: bool,
        ids_unique_per_session: bool,
        request_meta: bool,
        server_requests: bool,
        result_type: bool,
        cancel_ends_listen: bool,
        effectful: frozenset[str],
        log_level_in_meta: bool,
        listen_streams: bool,
        cache_hints: bool,
        session_header: bool,
        http_cancel_closes_stream: bool,
        standard_headers: bool,
    ) -> None:
        self.era = era
        """The era (``None`` for ``UNDECIDED``)."""
        self.handshake = handshake
        """An ``initialize`` handshake opens the session (otherwise every request stands alone)."""
        self.probe = probe
        """A client must open with the ``server/discover`` probe (or ``initialize``) before any
        other request: the era is not chosen yet (``UNDECIDED`` only)."""
        self.ids_unique_per_session = ids_unique_per_session
        """A request id may not be reused within the session ("MUST NOT ... used in the same
        session"); otherwise only while a request with it is in flight."""
        self.request_meta = request_meta
        """Every request carries ``_meta`` with the protocol version, the client's
        capabilities and ``clientInfo`` (the client fills them); a request is checked against
        the capabilities it carries."""
        self.server_requests = server_requests
        """A server may send requests (sampling, elicitation, roots, ping); otherwise it asks
        for input with an ``input_required`` result and never sends a request."""
        self.result_type = result_type
        """Results carry ``resultType`` (``"complete"``, filled when missing, or
        ``"input_required"``)."""
        self.cancel_ends_listen = cancel_ends_listen
        """A server's ``notifications/cancelled`` names the client's ``subscriptions/listen``
        request and ends that stream (the only cancel a server sends); otherwise a cancel names
        a request of its sender."""
        self.effectful = effectful
        """The requests whose successful answer changes the session (``initialize``,
        ``resources/subscribe``, ``resources/unsubscribe``, ``logging/setLevel``)."""
        self.log_level_in_meta = log_level_in_meta
        """The log level comes from each request's ``_meta`` logLevel (and log messages need a
        request that set one); otherwise from the session's ``logging/setLevel``."""
        self.listen_streams = listen_streams
        """Change and update notifications go on ``subscriptions/listen`` streams, tagged with
        the stream's ``subscriptionId``; otherwise list changes are unsolicited and updates
        follow ``resources/subscribe``."""
        self.cache_hints = cache_hints
        """List and read results carry ``ttlMs`` and ``cacheScope``."""
        self.session_header = session_header
        """Streamable HTTP: the server may assign an ``Mcp-Session-Id`` at ``initialize``."""
        self.http_cancel_closes_stream = http_cancel_closes_stream
        """Streamable HTTP: a request is cancelled by closing its HTTP stream, not by
        ``notifications/cancelled``."""
        self.standard_headers = standard_headers
        """Streamable HTTP: requests carry the standard headers (``Mcp-Method``, ``Mcp-Name``)
        that mirror the body; a mismatch is refused with -32020 (``HEADER_MISMATCH``)."""

    def __repr__(self) -> str:
        return "EraPolicy(" + ", ".join(f"{n}={getattr(self, n)!r}" for n in FIELDS) + ")"

    def __deepcopy__(self, memo: dict[int, Any]) -> EraPolicy:
        return self  # an immutable table: copies share it

    def fields(self) -> dict[str, Any]:
        """Every field, by name."""
        return {name: getattr(self, name) for name in FIELDS}


#: The names of :class:`EraPolicy`'s fields, in order.
FIELDS: Final = (
    "era",
    "handshake",
    "probe",
    "ids_unique_per_session",
    "request_meta",
    "server_requests",
    "result_type",
    "cancel_ends_listen",
    "effectful",
    "log_level_in_meta",
    "listen_streams",
    "cache_hints",
    "session_header",
    "http_cancel_closes_stream",
    "standard_headers",
)

_EFFECTFUL: Final = frozenset(
    {INITIALIZE, RESOURCES_SUBSCRIBE, RESOURCES_UNSUBSCRIBE, LOGGING_SET_LEVEL}
)

#: The policy of each era.
POLICIES: Final[Mapping[Era, EraPolicy]] = {
    Era.INITIALIZE: EraPolicy(
        era=Era.INITIALIZE,
        handshake=True,
        probe=False,
        ids_unique_per_session=True,
        request_meta=False,
        server_requests=True,
        result_type=False,
        cancel_ends_listen=False,
        effectful=_EFFECTFUL,
        log_level_in_meta=False,
        listen_streams=False,
        cache_hints=False,
        session_header=True,
        http_cancel_closes_stream=False,
        standard_headers=False,
    ),
    Era.STATELESS: EraPolicy(
        era=Era.STATELESS,
        handshake=False,
        probe=False,
        ids_unique_per_session=False,
        request_meta=True,
        server_requests=False,
        result_type=True,
        cancel_ends_listen=True,
        effectful=frozenset(),
        log_level_in_meta=True,
        listen_streams=True,
        cache_hints=True,
        session_header=False,
        http_cancel_closes_stream=True,
        standard_headers=True,
    ),
}

#: A side of both eras before the first exchange: the initialize era's rules for ids and
#: effects (what it may do then is the lifecycle's IDLE row), and the probe comes first.
UNDECIDED: Final = EraPolicy(**{**POLICIES[Era.INITIALIZE].fields(), "era": None, "probe": True})
