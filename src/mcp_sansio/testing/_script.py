"""The script under construction (:class:`Script`): the exchange a near miss starts
from, with the ids and tokens already used, the session's stage and each side's
capabilities; and the valid messages of the sender's a near miss is made from
(:func:`valid_message`).
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from typing import Any, Final

import attrs
from hypothesis import strategies as st

from mcp_sansio._connection import (
    META_CAPABILITIES,
    META_CLIENT_INFO,
    META_SUBSCRIPTION,
    META_VERSION,
)
from mcp_sansio._errors import ErrorCode
from mcp_sansio._events import RequestId
from mcp_sansio._sentinels import OMITTED
from mcp_sansio._state import Role
from mcp_sansio._versions import VERSIONS, Kind, VersionSpec
from mcp_sansio.testing._faults._ground import LISTEN_FLAGS, may_send, methods_of
from mcp_sansio.testing._rules import RULES
from mcp_sansio.testing._scenario import (
    ACK,
    CANCELLED,
    CLIENT_INFO,
    DISCOVER,
    IDS,
    LISTEN,
    PROGRESS,
    PROGRESS_VALUES,
    SERVER_INFO,
    SERVER_INFO_KEY,
    UPDATED,
    Expect,
    Line,
    NearMiss,
    Scenario,
    error_msg,
    fresh_in,
    key_of,
    line_of,
    notification_msg,
    request_msg,
    response_msg,
    schema_capabilities,
)
from mcp_sansio.testing._schema_strategies import params as schema_params

# ---------------------------------------------------------------------------- the script


@attrs.frozen
class Ctx:
    spec: VersionSpec
    sender: Role
    max_message_size: int


class Script:
    """The exchange under construction, with the ids and tokens already used."""

    def __init__(
        self,
        draw: st.DrawFn,
        ctx: Ctx,
        *,
        client_caps: Mapping[str, Any] | None = None,
        server_caps: Mapping[str, Any] | None = None,
    ) -> None:
        self.draw = draw
        self.ctx = ctx
        self.spec = ctx.spec
        self.version = ctx.spec.version
        self.legacy = ctx.spec.policy.handshake
        self.sender = ctx.sender
        self.receiver = ctx.sender.peer
        self.caps: dict[Role, dict[str, Any]] = {
            Role.CLIENT: copy.deepcopy(
                dict(client_caps)
                if client_caps is not None
                else schema_capabilities(self.version, Role.CLIENT)
            ),
            Role.SERVER: copy.deepcopy(
                dict(server_caps)
                if server_caps is not None
                else schema_capabilities(self.version, Role.SERVER)
            ),
        }
        self.lines: list[Line] = []
        self.used: dict[Role, set[tuple[type, Any]]] = {Role.CLIENT: set(), Role.SERVER: set()}
        self.tokens: set[tuple[type, Any]] = set()
        self.stage = "idle" if self.legacy else "operating"
        self.init_id: RequestId | None = None
        # The receiver's size limit the scenario assumes (set only where it matters).
        self.max_message_size: int | None = None

    # -- copies

    def fork(self) -> Script:
        other = copy.copy(self)
        other.caps = copy.deepcopy(self.caps)
        other.lines = list(self.lines)
        other.used = {role: set(ids) for role, ids in self.used.items()}
        other.tokens = set(self.tokens)
        return other

    def recap(
        self,
        *,
        client_caps: Mapping[str, Any] | None = None,
        server_caps: Mapping[str, Any] | None = None,
    ) -> Script:
        """A fork whose lines declare other capabilities (the initialize request and
        result, the discover result, 2026 request ``_meta``)."""
        other = self.fork()
        old_client = self.caps[Role.CLIENT]
        if client_caps is not None:
            other.caps[Role.CLIENT] = copy.deepcopy(dict(client_caps))
        if server_caps is not None:
            other.caps[Role.SERVER] = copy.deepcopy(dict(server_caps))
        other.lines = [other._recap(line, old_client) for line in self.lines]
        return other

    def _recap(self, line: Line, old_client: Mapping[str, Any]) -> Line:
        obj = line.json()
        params = obj.get("params")
        result = obj.get("result")
        if obj.get("method") == "initialize" and isinstance(params, dict):
            params["capabilities"] = self.caps[Role.CLIENT]
        elif isinstance(result, dict) and ("serverInfo" in result or "supportedVersions" in result):
            result["capabilities"] = self.caps[Role.SERVER]
        elif isinstance(params, dict) and isinstance(params.get("_meta"), dict):
            meta = params["_meta"]
            if "id" in obj and meta.get(META_CAPABILITIES) == old_client:
                meta[META_CAPABILITIES] = self.caps[Role.CLIENT]
        else:
            return line
        return Line(line.sender, line_of(obj))

    # -- ids

    def new_id(self, role: Role) -> RequestId:
        rid = fresh_in(self.draw(IDS), self.used[role])
        self.used[role].add(key_of(rid))
        return rid

    def use(self, role: Role, rid: Any) -> None:
        self.used[role].add(key_of(rid))

    def new_token(self) -> RequestId:
        token = fresh_in(self.draw(IDS), self.tokens)
        self.tokens.add(key_of(token))
        return token

    # -- lines

    def add(self, role: Role, obj: Any) -> None:
        self.lines.append(Line(role, line_of(obj)))

    def request(self, role: Role, method: str, params: Any = None, *, rid: Any = None) -> RequestId:
        chosen: RequestId
        if rid is None:
            chosen = self.new_id(role)
        else:
            chosen = rid
            self.use(role, chosen)
        self.add(role, request_msg(chosen, method, params))
        return chosen

    def respond(self, role: Role, rid: Any, result: Any) -> None:
        self.add(role, response_msg(rid, result))

    def notify(self, role: Role, method: str, params: Any = None) -> None:
        self.add(role, notification_msg(method, params))

    # -- contents

    def meta(
        self,
        *,
        caps: Mapping[str, Any] | None = None,
        extra: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        """A 2026-07-28 request ``_meta``: this version and the client's capabilities."""
        meta: dict[str, Any] = {
            META_VERSION: self.version,
            META_CAPABILITIES: copy.deepcopy(
                dict(self.caps[Role.CLIENT] if caps is None else caps)
            ),
            META_CLIENT_INFO: dict(CLIENT_INFO),
        }
        meta.update(extra or {})
        return meta

    def params(
        self,
        role: Role,
        method: str,
        *,
        version: str | None = None,
        as_request: bool | None = None,
        token: Any = None,
        meta: Mapping[str, Any] | None = None,
    ) -> dict[str, Any] | None:
        """Schema-valid params of ``method`` (of ``version``, by default this one) sent by
        ``role``: no progress token unless ``token``; 2026 client requests get the
        required ``_meta`` (with ``meta`` added)."""
        value = self.draw(schema_params(version or self.version, method))
        params: dict[str, Any] | None = None if value is OMITTED else copy.deepcopy(value)
        if params is not None:
            for key in ("inputResponses", "requestState"):
                params.pop(key, None)
            generated = params.get("_meta")
            if isinstance(generated, dict):
                params["_meta"] = {k: v for k, v in generated.items() if k != "progressToken"}
        if as_request is None:
            spec = VERSIONS[version or self.version]
            as_request = spec.methods[method].kind is Kind.REQUEST
        if not self.legacy and role is Role.CLIENT and as_request:
            params = dict(params or {})
            generated = params.get("_meta")
            kept = {
                k: v
                for k, v in (generated.items() if isinstance(generated, dict) else ())
                if k not in (META_VERSION, META_CAPABILITIES)
            }
            params["_meta"] = {**kept, **self.meta(extra=meta)}
        if token is not None:
            params = dict(params or {})
            params["_meta"] = {**(params.get("_meta") or {}), "progressToken": token}
        return params

    def result(self, method: str) -> dict[str, Any]:
        """A minimal valid result of ``method`` (the receiver's or the sender's answer)."""
        if method == DISCOVER:
            return {
                "resultType": "complete",
                "supportedVersions": [self.version],
                "capabilities": copy.deepcopy(self.caps[Role.SERVER]),
                "ttlMs": 0,
                "cacheScope": "public",
                "_meta": {SERVER_INFO_KEY: dict(SERVER_INFO)},
            }
        return {} if self.legacy else {"resultType": "complete"}

    # -- phases

    def initialize_params(self, version: str | None = None) -> dict[str, Any]:
        return {
            "protocolVersion": version or self.version,
            "capabilities": copy.deepcopy(self.caps[Role.CLIENT]),
            "clientInfo": dict(CLIENT_INFO),
        }

    def initialize_result(self, version: str | None = None) -> dict[str, Any]:
        return {
            "protocolVersion": version or self.version,
            "capabilities": copy.deepcopy(self.caps[Role.SERVER]),
            "serverInfo": dict(SERVER_INFO),
        }

    def handshake(self, until: str = "operating") -> None:
        """The initialize handshake, from where it stands up to stage ``until``
        (``"initializing"``, ``"initialized"`` or ``"operating"``)."""
        order = ("idle", "initializing", "initialized", "operating")
        while order.index(self.stage) < order.index(until):
            if self.stage == "idle":
                self.init_id = self.request(Role.CLIENT, "initialize", self.initialize_params())
                self.stage = "initializing"
            elif self.stage == "initializing":
                self.respond(Role.SERVER, self.init_id, self.initialize_result())
                self.stage = "initialized"
            else:
                self.notify(Role.CLIENT, "notifications/initialized")
                self.stage = "operating"

    def discover(self) -> RequestId:
        """2026-07-28: a ``server/discover`` round trip."""
        rid = self.request(Role.CLIENT, DISCOVER, {"_meta": self.meta()})
        self.respond(Role.SERVER, rid, self.result(DISCOVER))
        return rid

    def opening(self) -> None:
        """Bring the session to where every method is allowed: the handshake, or in
        2026-07-28 a discover round trip (always for a client receiver, so that it knows
        the server's capabilities; sometimes for a server)."""
        if self.legacy:
            self.handshake()
        elif self.receiver is Role.CLIENT or self.draw(st.booleans()):
            self.discover()

    def filler(self) -> None:
        """Up to two answered round trips that change nothing (``ping`` either way, or
        a discover)."""
        for _ in range(self.draw(st.integers(0, 2))):
            if self.legacy:
                role = self.draw(st.sampled_from((Role.CLIENT, Role.SERVER)))
                rid = self.request(role, "ping", self.draw(st.sampled_from((None, {}))))
                self.respond(role.peer, rid, {})
            else:
                self.discover()

    def requests_of(self, role: Role) -> list[str]:
        """The requests ``role`` may send now (its peer's capabilities being as
        declared)."""
        if self.stage != "operating":
            return ["ping"] if "ping" in self.spec.methods else []
        return methods_of(self.spec, role, Kind.REQUEST, caps=self.caps[role.peer])

    def in_flight(self, role: Role, *, token: Any = None, meta: Any = None) -> RequestId:
        """A request of ``role``'s left unanswered (never a listen: progress and logging
        do not go on listen streams)."""
        methods = [m for m in self.requests_of(role) if m != LISTEN]
        method = self.draw(st.sampled_from(methods))
        return self.request(role, method, self.params(role, method, token=token, meta=meta))

    def answered(self, role: Role) -> RequestId:
        """A request of ``role``'s, answered by its peer (``ping``; 2026: discover)."""
        if self.legacy:
            rid = self.request(role, "ping", self.draw(st.sampled_from((None, {}))))
            self.respond(role.peer, rid, {})
            return rid
        return self.discover()

    def listen(self, wanted: Mapping[str, Any], *, ack: bool = True, rid: Any = None) -> RequestId:
        """2026-07-28: a ``subscriptions/listen`` in flight (and its acknowledgement,
        granting everything asked)."""
        chosen = self.request(
            Role.CLIENT, LISTEN, {"_meta": self.meta(), "notifications": wanted}, rid=rid
        )
        if ack:
            self.notify(
                Role.SERVER, ACK, {"_meta": {META_SUBSCRIPTION: chosen}, "notifications": wanted}
            )
        return chosen

    # -- results

    def scenario(self, message: Any) -> Scenario:
        return Scenario(
            version=self.version,
            sender=self.sender,
            client_capabilities=copy.deepcopy(self.caps[Role.CLIENT]),
            server_capabilities=copy.deepcopy(self.caps[Role.SERVER]),
            exchange=tuple(self.lines),
            message=message if isinstance(message, bytes) else line_of(message),
            max_message_size=self.max_message_size,
        )

    def near(
        self,
        name: str,
        message: Any,
        expect: Expect,
        repaired: Scenario | None,
        note: str,
    ) -> NearMiss:
        base = self.scenario(message)
        return NearMiss(
            version=base.version,
            sender=base.sender,
            client_capabilities=base.client_capabilities,
            server_capabilities=base.server_capabilities,
            exchange=base.exchange,
            message=base.message,
            max_message_size=base.max_message_size,
            rule=name,
            expect=expect,
            repaired=repaired,
            note=note,
        )


def error_expect(name: str, rid: Any, **more: Any) -> Expect:
    return Expect(reply="error", code=RULES[name].code, id=rid, **more)


NO_REPLY: Final = Expect(reply="none")


# ---------------------------------------------------------------------------- valid messages


def can_request(s: Script, role: Role) -> bool:
    return bool(s.requests_of(role))


def sender_request(s: Script, method: str | None = None) -> dict[str, Any]:
    """A valid request of the sender's (not sent)."""
    if method is None:
        method = s.draw(st.sampled_from(s.requests_of(s.sender)))
    rid = s.new_id(s.sender)
    return request_msg(rid, method, s.params(s.sender, method))


def _plain_notifications(s: Script) -> list[str]:
    """Notifications of the sender's that need no state (legacy, operating)."""
    if not s.legacy or s.stage != "operating":
        return []
    return [
        m
        for m in methods_of(s.spec, s.sender, Kind.NOTIFICATION, caps=s.caps[s.sender])
        if m not in (CANCELLED, PROGRESS, UPDATED)
    ]


def progress_notification(s: Script) -> dict[str, Any]:
    """A receiver's request in flight with a progress token, and a valid progress
    notification of the sender's for it."""
    token = s.new_token()
    s.in_flight(s.receiver, token=token)
    params: dict[str, Any] = {"progressToken": token, "progress": s.draw(PROGRESS_VALUES)}
    if s.draw(st.booleans()):
        params["total"] = params["progress"] + s.draw(st.integers(0, 100))
    if s.spec.progress_message and s.draw(st.booleans()):
        params["message"] = s.draw(st.text(max_size=10))
    return notification_msg(PROGRESS, params)


def _sender_notification(s: Script) -> dict[str, Any]:
    """A valid notification of the sender's (not sent; its setup is added)."""
    paths = []
    plain = _plain_notifications(s)
    if plain:
        paths.append("plain")
    if may_send(s.spec, s.sender, PROGRESS) and can_request(s, s.receiver):
        paths.append("progress")
    if may_send(s.spec, s.sender, CANCELLED) and can_request(s, s.sender):
        paths.append("cancel")
    path = s.draw(st.sampled_from(paths))
    if path == "plain":
        method = s.draw(st.sampled_from(plain))
        return notification_msg(method, s.params(s.sender, method))
    if path == "progress":
        return progress_notification(s)
    rid = s.in_flight(s.sender)
    params: dict[str, Any] = {"requestId": rid}
    if s.draw(st.booleans()):
        params["reason"] = s.draw(st.text(max_size=10))
    return notification_msg(CANCELLED, params)


def receiver_request_method(s: Script) -> str:
    return "ping" if s.legacy else DISCOVER


def _sender_response(s: Script) -> dict[str, Any]:
    """A valid answer of the sender's to a receiver's request in flight."""
    method = receiver_request_method(s)
    params = {"_meta": s.meta()} if not s.legacy else None
    rid = s.request(s.receiver, method, params)
    if s.draw(st.booleans()):
        return error_msg(rid, int(ErrorCode.INTERNAL_ERROR), "failed")
    return response_msg(rid, s.result(method))


def kinds_of(s: Script, kinds: Iterable[str]) -> list[str]:
    out = []
    for kind in kinds:
        if (
            (kind == "request" and can_request(s, s.sender))
            or kind == "notification"
            or (kind == "response" and can_request(s, s.receiver))
        ):
            out.append(kind)
    return out


def valid_message(s: Script, kinds: Iterable[str]) -> dict[str, Any]:
    """A valid message of the sender's of one of ``kinds`` (with its setup added)."""
    kind = s.draw(st.sampled_from(kinds_of(s, kinds)))
    if kind == "request":
        return sender_request(s)
    if kind == "notification":
        return _sender_notification(s)
    return _sender_response(s)


# -- ids


def listen_flags(s: Script) -> dict[str, Any]:
    """A listen's opt-ins: some list-changed flags, some resource URIs."""
    wanted: dict[str, Any] = {flag: True for flag in sorted(LISTEN_FLAGS) if s.draw(st.booleans())}
    if s.draw(st.booleans()):
        wanted["resourceSubscriptions"] = s.draw(
            st.lists(st.sampled_from(["file:///a.txt", "mcp://x/y", "urn:z"]), unique=True)
        )
    return wanted


# -- capabilities


def gated(spec: VersionSpec, sender: Role, kind: Kind) -> list[str]:
    return [m for m in methods_of(spec, sender, kind) if spec.methods[m].gate]


# -- methods and params


def params_methods_of(s: Script) -> list[str]:
    methods = [
        m
        for m in methods_of(s.spec, s.sender, Kind.REQUEST, caps=s.caps[s.receiver])
        if m in s.spec.required_params
    ]
    if s.legacy and s.sender is Role.CLIENT:
        methods.append("initialize")
    return methods
