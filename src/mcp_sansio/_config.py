"""The connection's configuration: one immutable, validated object."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import Any

import attrs
import orjson

from ._framing import DEFAULT_CLIENT_MAX_MESSAGE_SIZE, DEFAULT_MAX_MESSAGE_SIZE
from ._ids import DEFAULT_ID_MEMORY_BYTES
from ._state import Role
from ._version import __version__
from ._versions import ALL_VERSIONS, VERSIONS, Era, MethodSpec, VersionSpec, extend

__all__ = ["DEFAULT_IMPLEMENTATION", "Config"]

#: The ``clientInfo`` / ``serverInfo`` used when none is configured.
DEFAULT_IMPLEMENTATION: Mapping[str, Any] = MappingProxyType(
    {"name": "mcp-sansio", "version": __version__}
)


def _versions(value: Iterable[str]) -> tuple[str, ...]:
    if isinstance(value, str):
        raise TypeError("versions must be a sequence of version strings, not one string")
    versions = tuple(value)
    if not versions:
        raise ValueError("versions must name at least one protocol version")
    for v in versions:
        if v not in VERSIONS:
            raise ValueError(f"unknown protocol version {v!r}; known: {', '.join(ALL_VERSIONS)}")
    if len(set(versions)) != len(versions):
        raise ValueError("versions must not repeat a version")
    return tuple(sorted(versions, reverse=True))


def _json_object(value: Mapping[str, Any]) -> Mapping[str, Any]:
    """A read-only deep copy of a JSON object (validated by a round trip through orjson)."""
    if not isinstance(value, Mapping):
        raise TypeError(f"expected a JSON object (a mapping), not {type(value).__name__}")
    try:
        copied = orjson.loads(orjson.dumps(dict(value)))
    except TypeError as exc:
        raise TypeError(f"not JSON-serialisable: {exc}") from None
    return MappingProxyType(copied)


def _names(value: Iterable[str]) -> frozenset[str]:
    if isinstance(value, str):
        raise TypeError("accept_undeclared must be a collection of method names, not a string")
    names = frozenset(value)
    for name in names:
        if not isinstance(name, str) or not name.startswith("notifications/"):
            raise ValueError(f"accept_undeclared names notification methods, not {name!r}")
    return names


def _methods(value: Iterable[MethodSpec]) -> tuple[MethodSpec, ...]:
    if isinstance(value, MethodSpec):
        raise TypeError("methods must be a sequence of MethodSpec, not one MethodSpec")
    methods = tuple(value)
    seen: set[str] = set()
    for spec in methods:
        if not isinstance(spec, MethodSpec):
            raise TypeError(f"methods must hold MethodSpec objects, not {type(spec).__name__}")
        if spec.method in seen:
            raise ValueError(f"methods names {spec.method!r} twice")
        seen.add(spec.method)
    return methods


def _positive(_inst: object, attribute: attrs.Attribute[int], value: int) -> None:
    if type(value) is not int or value < 1:
        raise ValueError(f"{attribute.name} must be a positive integer, not {value!r}")


def _default_max_message_size(config: Config) -> int:
    return (
        DEFAULT_MAX_MESSAGE_SIZE if config.role is Role.SERVER else DEFAULT_CLIENT_MAX_MESSAGE_SIZE
    )


@attrs.frozen(kw_only=True)
class Config:
    """Everything a :class:`Connection` is configured with. Immutable and validated."""

    role: Role = attrs.field(validator=attrs.validators.instance_of(Role))
    """Which side this connection plays."""
    versions: tuple[str, ...] = attrs.field(default=ALL_VERSIONS, converter=_versions)
    """The protocol versions this side accepts, newest first (default: all five)."""
    capabilities: Mapping[str, Any] = attrs.field(factory=dict, converter=_json_object)
    """This side's capabilities, as in the specification's JSON. In the initialize era
    they are informative (the ``initialize`` messages the application writes are what
    count); in the stateless era a client puts them in each request's ``_meta`` and a
    server gates requests by them."""
    implementation: Mapping[str, Any] = attrs.field(
        default=DEFAULT_IMPLEMENTATION, converter=_json_object
    )
    """This side's ``Implementation`` (``name``, ``version``, …): the ``clientInfo`` a
    stateless client puts in ``_meta``."""
    max_message_size: int = attrs.field(
        default=attrs.Factory(_default_max_message_size, takes_self=True), validator=_positive
    )
    """The largest message accepted from the peer, in bytes: by default 4 MiB for a server
    (:data:`~mcp_sansio.DEFAULT_MAX_MESSAGE_SIZE`) and 64 MiB for a client
    (:data:`~mcp_sansio.DEFAULT_CLIENT_MAX_MESSAGE_SIZE`), which asked for what it gets:
    servers answer with whole files, some of them twice (text and structured content)."""
    max_in_flight: int = attrs.field(default=4096, validator=_positive)
    """How many of the peer's requests may wait for our answer at once; beyond it a
    request is refused (-32600) so a flood costs bounded memory. It also bounds, in
    entries, the ids of refused requests whose error is still owed and of the peer's
    cancelled requests whose late answer we may still write (each also within
    :attr:`id_memory_bytes`; past either bound the oldest is forgotten, and writing its
    answer raises :class:`LocalProtocolError`)."""
    max_in_flight_bytes: int = attrs.field(default=64 * 1024 * 1024, validator=_positive)
    """How many bytes of the peer's requests (the size of their JSON) may wait for our
    answer at once (default 64 MiB); a request that would take them past it is refused
    (-32600, "more than N bytes of requests in flight"), unless it is the only one counted.
    Requests under 4 KiB are not counted (:attr:`max_in_flight` bounds them: 16 MiB at the
    defaults), so the common small request costs nothing more."""
    max_subscriptions: int = attrs.field(default=4096, validator=_positive)
    """A server's bound on the resources its peer subscribes to (initialize era),
    counting the subscriptions not answered yet; past it ``resources/subscribe`` to a new
    URI is refused (-32600, "more than N subscriptions")."""
    max_subscription_bytes: int = attrs.field(default=1024 * 1024, validator=_positive)
    """A server's bound on the bytes of the URIs its peer subscribes to (default 1 MiB,
    counted as for :attr:`id_memory_bytes`); past it ``resources/subscribe`` to a new URI
    is refused (-32600, "subscribed URIs over N bytes")."""
    id_memory: int = attrs.field(default=65536, validator=_positive)
    """How many request ids outside the contiguous run of integers are remembered to catch
    reuse in the initialize era (see :class:`IdHistory`)."""
    id_memory_bytes: int = attrs.field(default=DEFAULT_ID_MEMORY_BYTES, validator=_positive)
    """The bound in bytes of each table of remembered ids and tokens (default 4 MiB): the
    two id histories (past it the oldest ids are forgotten, and the peer's reuse of those
    is no longer detected), the owed errors, and the cancelled ids and progress tokens.
    An id costs its length (4 bytes a character when it is not ASCII; an integer 8); the
    newest entry of a table is always kept. See docs/errors.rst, "Bounds on what a peer can
    grow"."""
    accept_undeclared: frozenset[str] = attrs.field(default=frozenset(), converter=_names)
    """A strictness switch: notification methods accepted from the peer even though the
    peer did not declare the capability that gates them (the default accepts none). Needed
    for the official Python SDK's ``MCPServer`` (``mcp`` 2.3.0), which sends
    ``notifications/message`` without declaring ``logging``: a client that wants those log
    messages sets ``accept_undeclared={"notifications/message"}``."""
    strict: bool = attrs.field(default=False, validator=attrs.validators.instance_of(bool))
    """A strictness switch beyond the text (the default is the text's): also refuse what
    the peer sends against only a SHOULD or SHOULD NOT of its own, or a lower-case "should"
    of the schema, where the text leaves it to the receiver to serve. By default these
    are accepted; with ``strict=True`` they are refused as before: a server's request
    other than ``ping`` before ``notifications/initialized`` (-32600); sampling with
    ``includeContext`` other than ``"none"`` without ``sampling.context``, in a request or
    in an ``input_required`` result (-32602); and, dropped as notifications are, a log
    message below the level set (``logging/setLevel``, or the lowest 2026 ``logLevel`` in
    flight), an update of a resource not subscribed to, a notification of a
    sub-capability not declared (``listChanged``, ``subscribe``) in 2024-11-05 and
    2025-03-26, and a 2024-11-05 progress notification with ``message``. What we send is
    checked as strictly either way. For test tools that want such peers refused; every
    refusal is listed in docs/connection.rst, "Every refusal of the peer's messages"."""
    cancelled_memory: int = attrs.field(default=1024, validator=_positive)
    """How many of our cancelled requests are remembered so that their late answers are
    dropped (and as many of their progress tokens), each table also within
    :attr:`id_memory_bytes`; past either bound, a late answer shows as an unknown-id
    :class:`InvalidMessage`."""

    methods: tuple[MethodSpec, ...] = attrs.field(default=(), converter=_methods)
    """Methods the application adds to the protocol's tables (a vendor request, an
    extension's methods): see :class:`MethodSpec`. They are enforced as the built-in ones
    are, in both directions; without them a method outside the version's table is refused
    (-32601)."""

    @property
    def specs(self) -> Mapping[str, VersionSpec]:
        """Every version's table, with :attr:`methods` added."""
        return extend(self.methods)

    @property
    def eras(self) -> frozenset[Era]:
        """The eras the configured versions belong to."""
        return frozenset(VERSIONS[v].era for v in self.versions)

    def versions_of(self, era: Era) -> tuple[str, ...]:
        """The configured versions of one era, newest first."""
        return tuple(v for v in self.versions if VERSIONS[v].era is era)
