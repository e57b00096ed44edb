"""What each protocol version allows, as data.

One :class:`VersionSpec` per released version: its era, whether JSON-RPC batches exist,
and for every method who may send it, whether it is a request or a notification, and
which declared capability gates it. Behaviour that differs between versions is looked up
here, never decided by comparing version strings elsewhere.

Capability gates follow one rule, taken from the specification's capability table: a
*request* is gated by a capability of its **receiver** (``tools/call`` needs the server's
``tools``; ``sampling/createMessage`` needs the client's ``sampling``), a *notification*
by a capability of its **sender** (``notifications/tools/list_changed`` needs the server's
``tools.listChanged``; ``notifications/roots/list_changed`` the client's
``roots.listChanged``). A gate is a path into the capabilities object; it is met when every
key on the path is present and the last value is neither ``false`` nor ``null``.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from typing import Any, Final

import attrs

from ._policy import POLICIES, UNDECIDED, Era, EraPolicy
from ._required_params import REQUIRED_PARAMS, Required

__all__ = [
    "ALL_VERSIONS",
    "Direction",
    "Era",
    "EraPolicy",
    "POLICIES",
    "UNDECIDED",
    "Kind",
    "MethodRule",
    "MethodSpec",
    "VERSIONS",
    "VersionSpec",
    "capability_met",
    "extend",
]


class Kind(enum.Enum):
    """Whether a method is a request (answered) or a notification (not answered)."""

    REQUEST = "request"
    NOTIFICATION = "notification"


class Direction(enum.Enum):
    """Who may send a method."""

    CLIENT_TO_SERVER = "client_to_server"
    SERVER_TO_CLIENT = "server_to_client"
    BOTH = "both"


@attrs.frozen
class MethodRule:
    """The rule for one method in one version."""

    method: str
    """The method name."""
    kind: Kind
    """Request or notification."""
    direction: Direction
    """Who may send it."""
    gate: tuple[str, ...] = ()
    """The capability path that must be declared (by the receiver of a request, the sender
    of a notification); empty when ungated."""
    input_required: bool = False
    """2026-07-28: whether its result may be ``resultType: "input_required"``."""


def _policy_of(spec: VersionSpec) -> EraPolicy:
    return POLICIES[spec.era]


@attrs.frozen
class VersionSpec:
    """Everything version-specific about one protocol version."""

    version: str
    """The version string, e.g. ``"2025-06-18"``."""
    era: Era
    """Which era the version belongs to."""
    batches: bool
    """Whether JSON-RPC batches (arrays) are allowed (2025-03-26 only)."""
    progress_message: bool
    """Whether ``notifications/progress`` may carry ``message``."""
    methods: Mapping[str, MethodRule]
    """Every method of the version, by name."""
    resource_not_found: int
    """The error code for an unknown resource."""
    elicitation_modes: bool = False
    """Whether elicitation has form/url modes with their own capabilities (2025-11-25 on)."""
    sampling_tools: bool = False
    """Whether sampling with tools or context needs ``sampling.tools``/``.context``."""
    negotiated_only_should: bool = False
    """Whether the text says only "SHOULD: Only use capabilities that were successfully
    negotiated" (2024-11-05 and 2025-03-26; MUST from 2025-06-18): a notification of an
    undeclared sub-capability breaks only a SHOULD (see ``_checks.undeclared_is_soft``)."""
    protocol_version_header: bool = False
    """Streamable HTTP: requests after initialization carry ``MCP-Protocol-Version``
    (2025-06-18 on)."""
    policy: EraPolicy = attrs.field(init=False)
    """The era's policy (``POLICIES``): what differs between the eras."""
    required_params: Mapping[str, tuple[Required, ...]] = attrs.field(init=False)
    """method -> the params its messages must carry, as ``(key, kind, enum)`` rows read
    from the schema (see ``mcp_sansio._required_params``)."""

    @policy.default
    def _policy(self) -> EraPolicy:
        return _policy_of(self)

    @required_params.default
    def _required_params(self) -> Mapping[str, tuple[Required, ...]]:
        return REQUIRED_PARAMS[self.version]

    def __deepcopy__(self, memo: dict[int, Any]) -> VersionSpec:
        return self  # an immutable table: copies share it


def capability_met(capabilities: Mapping[str, Any], path: tuple[str, ...]) -> bool:
    """Whether ``capabilities`` declares the capability at ``path``."""
    value: Any = capabilities
    for key in path:
        if not isinstance(value, Mapping):
            return False
        value = value.get(key)
        if value is None or value is False:
            return False
    return True


_C = Direction.CLIENT_TO_SERVER
_S = Direction.SERVER_TO_CLIENT
_B = Direction.BOTH
_REQ = Kind.REQUEST
_NOTE = Kind.NOTIFICATION


def _rules(*rules: MethodRule) -> dict[str, MethodRule]:
    return {r.method: r for r in rules}


_V2024: Final = _rules(
    MethodRule("initialize", _REQ, _C),
    MethodRule("ping", _REQ, _B),
    MethodRule("resources/list", _REQ, _C, ("resources",)),
    MethodRule("resources/templates/list", _REQ, _C, ("resources",)),
    MethodRule("resources/read", _REQ, _C, ("resources",)),
    MethodRule("resources/subscribe", _REQ, _C, ("resources", "subscribe")),
    MethodRule("resources/unsubscribe", _REQ, _C, ("resources", "subscribe")),
    MethodRule("prompts/list", _REQ, _C, ("prompts",)),
    MethodRule("prompts/get", _REQ, _C, ("prompts",)),
    MethodRule("tools/list", _REQ, _C, ("tools",)),
    MethodRule("tools/call", _REQ, _C, ("tools",)),
    MethodRule("logging/setLevel", _REQ, _C, ("logging",)),
    MethodRule("completion/complete", _REQ, _C),
    MethodRule("sampling/createMessage", _REQ, _S, ("sampling",)),
    MethodRule("roots/list", _REQ, _S, ("roots",)),
    MethodRule("notifications/initialized", _NOTE, _C),
    MethodRule("notifications/cancelled", _NOTE, _B),
    MethodRule("notifications/progress", _NOTE, _B),
    MethodRule("notifications/roots/list_changed", _NOTE, _C, ("roots", "listChanged")),
    MethodRule("notifications/message", _NOTE, _S, ("logging",)),
    MethodRule("notifications/resources/list_changed", _NOTE, _S, ("resources", "listChanged")),
    MethodRule("notifications/resources/updated", _NOTE, _S, ("resources", "subscribe")),
    MethodRule("notifications/prompts/list_changed", _NOTE, _S, ("prompts", "listChanged")),
    MethodRule("notifications/tools/list_changed", _NOTE, _S, ("tools", "listChanged")),
)

_V2025_03: Final = {
    **_V2024,
    **_rules(MethodRule("completion/complete", _REQ, _C, ("completions",))),
}

_V2025_06: Final = {
    **_V2025_03,
    **_rules(MethodRule("elicitation/create", _REQ, _S, ("elicitation",))),
}

_V2025_11: Final = {
    **_V2025_06,
    **_rules(
        MethodRule("tasks/get", _REQ, _B, ("tasks",)),
        MethodRule("tasks/result", _REQ, _B, ("tasks",)),
        MethodRule("tasks/list", _REQ, _B, ("tasks", "list")),
        MethodRule("tasks/cancel", _REQ, _B, ("tasks", "cancel")),
        MethodRule("notifications/tasks/status", _NOTE, _B),
        MethodRule("notifications/elicitation/complete", _NOTE, _S),
    ),
}

_V2026: Final = _rules(
    MethodRule("server/discover", _REQ, _C),
    MethodRule("resources/list", _REQ, _C, ("resources",)),
    MethodRule("resources/templates/list", _REQ, _C, ("resources",)),
    MethodRule("resources/read", _REQ, _C, ("resources",), input_required=True),
    MethodRule("subscriptions/listen", _REQ, _C),
    MethodRule("prompts/list", _REQ, _C, ("prompts",)),
    MethodRule("prompts/get", _REQ, _C, ("prompts",), input_required=True),
    MethodRule("tools/list", _REQ, _C, ("tools",)),
    MethodRule("tools/call", _REQ, _C, ("tools",), input_required=True),
    MethodRule("completion/complete", _REQ, _C, ("completions",)),
    MethodRule("notifications/cancelled", _NOTE, _B),
    MethodRule("notifications/progress", _NOTE, _S),
    MethodRule("notifications/message", _NOTE, _S, ("logging",)),
    MethodRule("notifications/subscriptions/acknowledged", _NOTE, _S),
    MethodRule("notifications/tools/list_changed", _NOTE, _S, ("tools", "listChanged")),
    MethodRule("notifications/prompts/list_changed", _NOTE, _S, ("prompts", "listChanged")),
    MethodRule("notifications/resources/list_changed", _NOTE, _S, ("resources", "listChanged")),
    MethodRule("notifications/resources/updated", _NOTE, _S, ("resources", "subscribe")),
)

#: Every released version, by name.
VERSIONS: Final[Mapping[str, VersionSpec]] = {
    "2024-11-05": VersionSpec(
        version="2024-11-05",
        era=Era.INITIALIZE,
        batches=False,
        progress_message=False,
        methods=_V2024,
        resource_not_found=-32002,
        negotiated_only_should=True,
    ),
    "2025-03-26": VersionSpec(
        version="2025-03-26",
        era=Era.INITIALIZE,
        batches=True,
        progress_message=True,
        methods=_V2025_03,
        resource_not_found=-32002,
        negotiated_only_should=True,
    ),
    "2025-06-18": VersionSpec(
        version="2025-06-18",
        era=Era.INITIALIZE,
        batches=False,
        progress_message=True,
        methods=_V2025_06,
        resource_not_found=-32002,
        protocol_version_header=True,
    ),
    "2025-11-25": VersionSpec(
        version="2025-11-25",
        era=Era.INITIALIZE,
        batches=False,
        progress_message=True,
        methods=_V2025_11,
        resource_not_found=-32002,
        elicitation_modes=True,
        sampling_tools=True,
        protocol_version_header=True,
    ),
    "2026-07-28": VersionSpec(
        version="2026-07-28",
        era=Era.STATELESS,
        batches=False,
        progress_message=True,
        methods=_V2026,
        resource_not_found=-32602,
        elicitation_modes=True,
        sampling_tools=True,
        protocol_version_header=True,
    ),
}

#: Every released version, newest first (the default of ``versions=``).
ALL_VERSIONS: Final[tuple[str, ...]] = tuple(sorted(VERSIONS, reverse=True))


def _kind(value: Kind | str) -> Kind:
    return value if isinstance(value, Kind) else Kind(value)


def _direction(value: Direction | str) -> Direction:
    return value if isinstance(value, Direction) else Direction(value)


def _gate(value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        raise TypeError("gate must be a sequence of keys (a path), not one string")
    path = tuple(value)
    if not all(isinstance(key, str) and key for key in path):
        raise TypeError(f"gate must be a path of non-empty strings, not {value!r}")
    return path


def _spec_versions(value: Any) -> tuple[str, ...] | None:
    if value is None:
        return None
    if isinstance(value, str):
        raise TypeError("versions must be a sequence of version strings, not one string")
    versions = tuple(value)
    for v in versions:
        if v not in VERSIONS:
            raise ValueError(f"unknown protocol version {v!r}; known: {', '.join(ALL_VERSIONS)}")
    if not versions:
        raise ValueError("versions must name at least one protocol version (or be None)")
    return tuple(sorted(set(versions), reverse=True))


# Names an application cannot define: the JSON-RPC reserved prefix, and the methods the
# Connection itself reads (their rules are the specification's).
_RESERVED_PREFIX: Final = "rpc."


@attrs.frozen
class MethodSpec:
    """A method the application adds to the protocol's tables: a vendor request (``acme/search``),
    an extension's methods, or a specification draft's experimental ones. Passed as
    ``Connection(role, methods=[...])`` (``Config.methods``), it is enforced as the built-in
    methods are, in both directions: who may send it, whether it is a request or a
    notification, the capability that gates it, and (2026-07-28) whether its result may be
    ``input_required``.

    A method of a built-in name cannot be redefined (``ValueError``).
    """

    method: str = attrs.field(validator=attrs.validators.instance_of(str))
    """The method name, e.g. ``"acme/search"``."""
    kind: Kind = attrs.field(converter=_kind)
    """:attr:`Kind.REQUEST` or :attr:`Kind.NOTIFICATION` (or ``"request"`` /
    ``"notification"``)."""
    direction: Direction = attrs.field(converter=_direction)
    """Who may send it: :attr:`Direction.CLIENT_TO_SERVER`, :attr:`Direction.SERVER_TO_CLIENT`
    or :attr:`Direction.BOTH` (or their values, ``"client_to_server"``, …)."""
    gate: tuple[str, ...] = attrs.field(default=(), converter=_gate)
    """The capability path that must be declared (by the *receiver* of a request, the
    *sender* of a notification, as for the built-in methods), e.g. ``("experimental",
    "acme")``; empty when ungated."""
    input_required: bool = attrs.field(default=False, validator=attrs.validators.instance_of(bool))
    """2026-07-28: whether its result may be ``resultType: "input_required"`` (requests
    only)."""
    versions: tuple[str, ...] | None = attrs.field(default=None, converter=_spec_versions)
    """The protocol versions it exists in; ``None`` (the default) for every version."""

    def __attrs_post_init__(self) -> None:
        name = self.method
        if not name or name.startswith(_RESERVED_PREFIX):
            raise ValueError(f"{name!r} is not a method an application may define")
        if self.input_required and self.kind is not Kind.REQUEST:
            raise ValueError(f"{name!r}: only a request can answer input_required")
        for version in self.versions or ALL_VERSIONS:
            if name in VERSIONS[version].methods:
                raise ValueError(
                    f"{name!r} is a method of protocol version {version}: it cannot be redefined"
                )

    def rule(self) -> MethodRule:
        """The method's row in a version's table."""
        return MethodRule(self.method, self.kind, self.direction, self.gate, self.input_required)


# The version tables extended by each set of application methods (bounded: a process
# configures a handful of sets).
_EXTENDED: dict[tuple[MethodSpec, ...], Mapping[str, VersionSpec]] = {}
_EXTENDED_MAX: Final = 64


def extend(methods: tuple[MethodSpec, ...]) -> Mapping[str, VersionSpec]:
    """The version tables with the application's ``methods`` added: :data:`VERSIONS` itself
    when there are none. Every Connection configured with the same methods shares them."""
    if not methods:
        return VERSIONS
    tables = _EXTENDED.get(methods)
    if tables is None:
        tables = {}
        for version, spec in VERSIONS.items():
            extra = {
                m.method: m.rule() for m in methods if m.versions is None or version in m.versions
            }
            tables[version] = attrs.evolve(spec, methods={**spec.methods, **extra})
        if len(_EXTENDED) >= _EXTENDED_MAX:
            _EXTENDED.clear()
        _EXTENDED[methods] = tables
    return tables
