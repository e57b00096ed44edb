"""Test helpers: a client and a server :class:`Connection` wired back to back (after h11's
``ConnectionPair``), raw feeding, and the handshakes of both eras.

:meth:`ConnectionPair.send` sends an event from one side, feeds the bytes to the other and
asserts that the peer's ``next_event()`` gives back exactly what was sent, and then
``NEED_DATA``. Two differences are expected and allowed for:

- a stateless (2026-07-28) client fills the required ``_meta`` keys into every request's
  params: the peer must see the params that were sent plus those keys (any ``_meta`` keys the
  application set itself must arrive unchanged);
- a stateless server adds ``"resultType": "complete"`` to a result that has none.
"""

from __future__ import annotations

import io
import time
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, Final

import orjson

from mcp_sansio import (
    ALL_VERSIONS,
    NEED_DATA,
    Connection,
    ErrorResponse,
    Event,
    InvalidMessage,
    Message,
    NextEvent,
    Notification,
    Request,
    Response,
    Role,
    State,
)
from mcp_sansio._versions import VERSIONS, Era

__all__ = [
    "CountingDict",
    "CountingSet",
    "ALL",
    "BATCH_VERSION",
    "CLIENT_INFO",
    "LEGACY",
    "META_CAPABILITIES",
    "META_CLIENT_INFO",
    "META_LOG_LEVEL",
    "META_SUBSCRIPTION",
    "META_VERSION",
    "MODERN",
    "SERVER_INFO",
    "ConnectionPair",
    "encode_line",
    "expect_invalid",
    "capability",
    "expected_gates",
    "feed",
    "ids",
    "initialize_params",
    "initialize_result",
    "legacy_pair",
    "modern_meta",
    "snapshot",
    "state_of",
    "stateless_pair",
]

#: Every released version, newest first.
ALL: Final = ALL_VERSIONS
#: The versions of the initialize era, newest first.
LEGACY: Final = tuple(v for v in ALL_VERSIONS if VERSIONS[v].era is Era.INITIALIZE)
#: The stateless version.
MODERN: Final = "2026-07-28"
#: The one version with JSON-RPC batches.
BATCH_VERSION: Final = "2025-03-26"

META_VERSION: Final = "io.modelcontextprotocol/protocolVersion"
META_CAPABILITIES: Final = "io.modelcontextprotocol/clientCapabilities"
META_CLIENT_INFO: Final = "io.modelcontextprotocol/clientInfo"
META_LOG_LEVEL: Final = "io.modelcontextprotocol/logLevel"
META_SUBSCRIPTION: Final = "io.modelcontextprotocol/subscriptionId"

CLIENT_INFO: Final[Mapping[str, Any]] = {"name": "test-client", "version": "1.0"}
SERVER_INFO: Final[Mapping[str, Any]] = {"name": "test-server", "version": "1.0"}


def initialize_params(
    version: str, capabilities: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """The params of an ``initialize`` request asking for ``version``."""
    return {
        "protocolVersion": version,
        "capabilities": dict(capabilities or {}),
        "clientInfo": dict(CLIENT_INFO),
    }


def initialize_request(
    version: str = "2025-11-25", request_id: Any = 0, capabilities: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """A whole ``initialize`` request asking for ``version``, as a raw peer writes it."""
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "initialize",
        "params": initialize_params(version, capabilities),
    }


def initialize_result(
    version: str, capabilities: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """The result of ``initialize`` choosing ``version``."""
    return {
        "protocolVersion": version,
        "capabilities": dict(capabilities or {}),
        "serverInfo": dict(SERVER_INFO),
    }


def modern_meta(
    capabilities: Mapping[str, Any] | None = None,
    version: str = MODERN,
    extra: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """A 2026-07-28 request ``_meta`` (as a raw peer would write it)."""
    meta: dict[str, Any] = {
        META_VERSION: version,
        META_CAPABILITIES: dict(capabilities or {}),
        META_CLIENT_INFO: dict(CLIENT_INFO),
    }
    meta.update(extra or {})
    return meta


def encode_line(obj: Any) -> bytes:
    """One JSON line for ``obj`` (bytes are passed through, a newline added if missing)."""
    if isinstance(obj, bytes):
        return obj if obj.endswith(b"\n") else obj + b"\n"
    return orjson.dumps(obj) + b"\n"


def feed(conn: Connection, obj: Any) -> NextEvent:
    """Write one raw line (a JSON-shaped object, or bytes) into ``conn``; return its next
    event."""
    conn.receive_data(encode_line(obj))
    return conn.next_event()


def expect_invalid(
    event: NextEvent, code: int | None, *, reply_id: Any = ..., reply: bool = True
) -> InvalidMessage:
    """Assert ``event`` is an :class:`InvalidMessage` with ``code`` (any code when ``None``);
    with ``reply``, that it carries a reply with the same code (addressed to ``reply_id``
    when given); without, that it carries none."""
    assert isinstance(event, InvalidMessage), event
    if code is not None:
        assert event.code == code, event
    if reply:
        assert event.reply is not None, event
        assert event.reply.code == event.code
        if reply_id is not ...:
            assert event.reply.id == reply_id, event
            assert type(event.reply.id) is type(reply_id)
    else:
        assert event.reply is None, event
    return event


def state_of(conn: Connection) -> State:
    """``conn.state`` (a call, so that mypy does not narrow it across ``send()``)."""
    return conn.state


def attributes(value: Any) -> dict[str, Any]:
    """The instance attributes of one of our objects, by name: from ``__slots__`` and
    ``__dict__``, or, for a class compiled by mypyc (which has neither at run time), from
    ``__mypyc_attrs__``."""
    names: list[str] = []
    for cls in type(value).__mro__:
        names += getattr(cls, "__mypyc_attrs__", ()) or getattr(cls, "__slots__", ())
    names += getattr(value, "__dict__", {})
    return {name: getattr(value, name) for name in dict.fromkeys(names) if hasattr(value, name)}


def snapshot(conn: Connection) -> tuple[Any, ...]:
    """What must not change when ``send()`` raises :class:`LocalProtocolError`."""
    return (
        conn.state,
        conn.era,
        conn.protocol_version,
        conn.outstanding,
        conn.owed,
        conn.peer_closed,
        None if conn.client_capabilities is None else dict(conn.client_capabilities),
        None if conn.server_capabilities is None else dict(conn.server_capabilities),
    )


class _Same:
    """The marker of :meth:`ConnectionPair.send`'s default ``expect``."""


_SAME: Final = _Same()


def _strip_filled_meta(sent: Any, got: Any) -> Any:
    """``got``'s params with the ``_meta`` keys a stateless client adds removed (after
    checking they are there and the application's own keys arrived unchanged)."""
    assert isinstance(got, dict), got
    meta = got.get("_meta")
    assert isinstance(meta, dict), got
    for key in (META_VERSION, META_CAPABILITIES, META_CLIENT_INFO):
        assert key in meta, (key, got)
    sent_meta = sent.get("_meta", {}) if isinstance(sent, Mapping) else {}
    rest = {
        k: v
        for k, v in meta.items()
        if k not in (META_VERSION, META_CAPABILITIES, META_CLIENT_INFO)
    }
    for key, value in sent_meta.items():
        assert meta[key] == value, (key, got)
    expected_rest = {
        k: v
        for k, v in sent_meta.items()
        if k not in (META_VERSION, META_CAPABILITIES, META_CLIENT_INFO)
    }
    assert rest == expected_rest
    params = {k: v for k, v in got.items() if k != "_meta"}
    return params or None


class ConnectionPair:
    """A client and a server wired back to back.

    Keywords common to both sides go in ``**common``; ``client=`` and ``server=`` give
    per-side keywords (e.g. ``capabilities=``), which override the common ones.
    """

    def __init__(
        self,
        *,
        client: Mapping[str, Any] | None = None,
        server: Mapping[str, Any] | None = None,
        **common: Any,
    ) -> None:
        self.client = Connection(Role.CLIENT, **{**common, **(client or {})})
        self.server = Connection(Role.SERVER, **{**common, **(server or {})})

    def states(self) -> tuple[State, State]:
        """The client's and the server's state."""
        return self.client.state, self.server.state

    def conn(self, side: Role) -> Connection:
        """The connection that plays ``side``."""
        return self.client if side is Role.CLIENT else self.server

    def peer(self, side: Role) -> Connection:
        """The connection that plays the other side."""
        return self.server if side is Role.CLIENT else self.client

    def send_raw(self, side: Role, event: Event) -> tuple[bytes, NextEvent]:
        """Send ``event`` from ``side``, feed the bytes to the peer and return them with the
        peer's next event (without checking it)."""
        data = self.conn(side).send(event)
        peer = self.peer(side)
        peer.receive_data(data)
        return data, peer.next_event()

    def send(self, side: Role, event: Message, expect: Event | _Same | None = _SAME) -> NextEvent:
        """Send ``event`` from ``side``; assert the peer's next event is ``expect`` (by
        default the event itself, as described in the module docstring; ``None``:
        ``NEED_DATA``, nothing delivered) and that nothing else follows."""
        sender = self.conn(side)
        data = sender.send(event)
        assert data.endswith(b"\n"), data
        assert data.count(b"\n") == 1, data
        peer = self.peer(side)
        peer.receive_data(data)
        got = peer.next_event()
        if expect is None:
            assert got is NEED_DATA, got
        elif isinstance(expect, _Same):
            self._check_same(sender, event, got)
        else:
            assert got == expect, (got, expect)
        assert peer.next_event() is NEED_DATA
        return got

    @staticmethod
    def _check_same(sender: Connection, event: Message, got: NextEvent) -> None:
        assert type(got) is type(event), (got, event)
        stateless = sender.era is Era.STATELESS or sender.state is State.PROBING
        if isinstance(event, Request):
            assert isinstance(got, Request)
            assert (got.id, type(got.id), got.method) == (event.id, type(event.id), event.method)
            if sender.role is Role.CLIENT and stateless:
                assert _strip_filled_meta(event.params, got.params) == (
                    {k: v for k, v in event.params.items() if k != "_meta"} or None
                    if isinstance(event.params, Mapping)
                    else event.params
                )
            else:
                assert got.params == event.params
        elif isinstance(event, Response) and sender.role is Role.SERVER and stateless:
            assert isinstance(got, Response)
            assert (got.id, type(got.id)) == (event.id, type(event.id))
            assert got.result == {"resultType": "complete", **event.result}
        else:
            assert got == event, (got, event)
            if isinstance(event, (Response, ErrorResponse)):
                assert isinstance(got, (Response, ErrorResponse))
                assert type(got.id) is type(event.id)

    def request(self, side: Role, method: str, params: Any = None, *, id: Any = None) -> Request:
        """Send a request from ``side`` (with the sender's next free id unless given);
        return the request as sent."""
        rid = self.conn(side).next_request_id() if id is None else id
        req = Request(id=rid, method=method, params=params)
        self.send(side, req)
        return req

    def respond(self, side: Role, request_id: Any, result: Mapping[str, Any] | None = None) -> None:
        """Answer the peer's request ``request_id`` from ``side`` with ``result`` (``{}``)."""
        self.send(side, Response(id=request_id, result=dict(result or {})))

    def roundtrip(self, side: Role, method: str, params: Any = None, result: Any = None) -> Request:
        """A request from ``side`` and its answer from the peer."""
        req = self.request(side, method, params)
        self.respond(side.peer, req.id, result)
        return req

    def handshake(
        self,
        version: str,
        *,
        client_capabilities: Mapping[str, Any] | None = None,
        server_capabilities: Mapping[str, Any] | None = None,
        request_id: Any = 0,
        answer_version: str | None = None,
        initialized: bool = True,
    ) -> None:
        """The initialize handshake: ``initialize`` asking for ``version`` → the result
        (choosing ``answer_version``, by default ``version``) → ``notifications/initialized``.

        The capabilities default to each side's configured ones.
        """
        ccaps = (
            self.client.config.capabilities if client_capabilities is None else client_capabilities
        )
        scaps = (
            self.server.config.capabilities if server_capabilities is None else server_capabilities
        )
        self.send(
            Role.CLIENT,
            Request(id=request_id, method="initialize", params=initialize_params(version, ccaps)),
        )
        assert self.states() == (State.INITIALIZING, State.INITIALIZING)
        chosen = answer_version or version
        self.send(Role.SERVER, Response(id=request_id, result=initialize_result(chosen, scaps)))
        assert self.states() == (State.INITIALIZED, State.INITIALIZED)
        assert self.client.protocol_version == self.server.protocol_version == chosen
        if initialized:
            self.send(Role.CLIENT, Notification(method="notifications/initialized"))
            assert self.states() == (State.OPERATING, State.OPERATING)


def stateless_pair(
    client_capabilities: Mapping[str, Any] | None = None,
    server_capabilities: Mapping[str, Any] | None = None,
    **common: Any,
) -> ConnectionPair:
    """A 2026-07-28 client and server (``versions=("2026-07-28",)`` on both sides)."""
    return ConnectionPair(
        versions=(MODERN,),
        client={"capabilities": dict(client_capabilities or {})},
        server={"capabilities": dict(server_capabilities or {})},
        **common,
    )


def legacy_pair(
    version: str,
    client_capabilities: Mapping[str, Any] | None = None,
    server_capabilities: Mapping[str, Any] | None = None,
    **common: Any,
) -> ConnectionPair:
    """An initialize-era pair that has completed the handshake for ``version``."""
    pair = ConnectionPair(
        client={"capabilities": dict(client_capabilities or {})},
        server={"capabilities": dict(server_capabilities or {})},
        **common,
    )
    pair.handshake(version)
    return pair


def ids(values: Iterable[Any]) -> list[str]:
    """Readable pytest ids for parametrized values."""
    return [repr(v) for v in values]


# ---------------------------------------------------------------------------- the gates
# The "Capabilities" section of each feature's page of the spec (MCP 2025-11-25, Server
# Features > Tools and the others; Base Protocol > Lifecycle > Capability Negotiation; MCP
# 2026-07-28, Architecture > Capability Negotiation), written out independently of
# ``_versions``: for each gated method, (who sends it, the capability path). A request is gated
# by its receiver's capability, a notification by its sender's.

_LEGACY_GATES: Final[dict[str, tuple[Role, tuple[str, ...]]]] = {
    "resources/list": (Role.CLIENT, ("resources",)),
    "resources/templates/list": (Role.CLIENT, ("resources",)),
    "resources/read": (Role.CLIENT, ("resources",)),
    "resources/subscribe": (Role.CLIENT, ("resources", "subscribe")),
    "resources/unsubscribe": (Role.CLIENT, ("resources", "subscribe")),
    "notifications/resources/updated": (Role.SERVER, ("resources", "subscribe")),
    "notifications/resources/list_changed": (Role.SERVER, ("resources", "listChanged")),
    "prompts/list": (Role.CLIENT, ("prompts",)),
    "prompts/get": (Role.CLIENT, ("prompts",)),
    "notifications/prompts/list_changed": (Role.SERVER, ("prompts", "listChanged")),
    "tools/list": (Role.CLIENT, ("tools",)),
    "tools/call": (Role.CLIENT, ("tools",)),
    "notifications/tools/list_changed": (Role.SERVER, ("tools", "listChanged")),
    "logging/setLevel": (Role.CLIENT, ("logging",)),
    "notifications/message": (Role.SERVER, ("logging",)),
    "sampling/createMessage": (Role.SERVER, ("sampling",)),
    "roots/list": (Role.SERVER, ("roots",)),
    "notifications/roots/list_changed": (Role.CLIENT, ("roots", "listChanged")),
}


def expected_gates(version: str) -> dict[str, tuple[tuple[Role, ...], tuple[str, ...]]]:
    """The gated methods of ``version``: method → (senders, capability path)."""
    if version == MODERN:
        gates: dict[str, tuple[tuple[Role, ...], tuple[str, ...]]] = {
            name: ((sender,), path)
            for name, (sender, path) in _LEGACY_GATES.items()
            if name
            not in (
                "resources/subscribe",
                "resources/unsubscribe",
                "logging/setLevel",
                "sampling/createMessage",
                "roots/list",
                "notifications/roots/list_changed",
            )
        }
        gates["completion/complete"] = ((Role.CLIENT,), ("completions",))
        return gates
    gates = {name: ((sender,), path) for name, (sender, path) in _LEGACY_GATES.items()}
    if version != "2024-11-05":
        gates["completion/complete"] = ((Role.CLIENT,), ("completions",))
    if version in ("2025-06-18", "2025-11-25"):
        gates["elicitation/create"] = ((Role.SERVER,), ("elicitation",))
    if version == "2025-11-25":
        both = (Role.CLIENT, Role.SERVER)
        gates["tasks/get"] = (both, ("tasks",))
        gates["tasks/result"] = (both, ("tasks",))
        gates["tasks/list"] = (both, ("tasks", "list"))
        gates["tasks/cancel"] = (both, ("tasks", "cancel"))
    return gates


def capability(path: tuple[str, ...]) -> dict[str, Any]:
    """The smallest capabilities object that declares ``path``."""
    leaf: Any = True if path[-1] in ("subscribe", "listChanged") else {}
    caps: dict[str, Any] = {path[-1]: leaf}
    for key in reversed(path[:-1]):
        caps = {key: caps}
    return caps


def run_probe_cli(argv: list[str], limit: float) -> tuple[int, str, str]:
    """``mcp-sansio probe ARGV`` in this process: (status, stdout, stderr); it must end
    within ``limit`` seconds."""
    from mcp_sansio.__main__ import main

    out, err = io.StringIO(), io.StringIO()
    started = time.monotonic()
    status = main(["probe", *argv], out, err)
    assert time.monotonic() - started < limit
    return status, out.getvalue(), err.getvalue()


def report_rows(report: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """A probe report's rows (``--json``), by rule."""
    return {row["rule"]: row for row in report["rules"]}


def sent(actions: Iterable[object]) -> list[dict[str, Any]]:
    """The messages a session's :class:`~mcp_sansio.session.Send` actions write, decoded."""
    from mcp_sansio.session import Send

    out = []
    for action in actions:
        if isinstance(action, Send):
            out += [orjson.loads(line) for line in action.data.splitlines()]
    return out


class CountingDict(dict[Any, Any]):
    """A dict that counts the walks over it."""

    walks = 0

    def __iter__(self) -> Iterator[Any]:
        CountingDict.walks += 1
        return super().__iter__()

    def items(self) -> Any:
        CountingDict.walks += 1
        return super().items()

    def values(self) -> Any:
        CountingDict.walks += 1
        return super().values()


class CountingSet(set[Any]):
    """A set that counts the walks over it."""

    walks = 0

    def __iter__(self) -> Iterator[Any]:
        CountingSet.walks += 1
        return super().__iter__()
