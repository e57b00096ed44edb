"""The faults of :mod:`._faults` played as scripts against our own Connection: the
:class:`ScriptGround` (it adds to the script what a builder asks for), where each rule's
script starts (its setup, and how its repaired twin's script is made), and
:func:`from_fault`, the near miss of one rule's fault.
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

from hypothesis import strategies as st

from mcp_sansio._connection import (
    META_CAPABILITIES,
    META_LOG_LEVEL,
    META_VERSION,
)
from mcp_sansio._errors import ErrorCode
from mcp_sansio._events import RequestId
from mcp_sansio._state import Role
from mcp_sansio._versions import Kind
from mcp_sansio.testing._faults import FAULTS, Draw, Fault, FaultBuilder, Ground
from mcp_sansio.testing._faults._ground import SENDS, may_send
from mcp_sansio.testing._faults.methods import invalid_params
from mcp_sansio.testing._rules import RULES
from mcp_sansio.testing._scenario import (
    LISTEN,
    STREAM_NOTIFICATIONS,
    UPDATED,
    Expect,
    NearMiss,
    error_msg,
    key_of,
    without,
)
from mcp_sansio.testing._script import (
    NO_REPLY,
    Ctx,
    Script,
    can_request,
    gated,
    kinds_of,
    listen_flags,
    params_methods_of,
    receiver_request_method,
    valid_message,
)

# ---------------------------------------------------------------------------- the faults


class ScriptGround(Ground):
    """A :class:`Script` as the ground of a fault: what the builder asks for (an answered
    request, a valid message of the sender's, ...) is added to the script."""

    def __init__(self, script: Script) -> None:
        self.script = script
        self.version = script.version
        self.sender = script.sender
        self.transport = "script"
        self.repairs = True
        self.max_message_size = script.ctx.max_message_size
        self.prepared = True
        """Whether the script is where the fault may be sent (see :meth:`prepare`)."""

    def capabilities(self, role: Role) -> Mapping[str, Any] | None:
        return self.script.caps[role]

    def fresh_id(self) -> RequestId:
        return self.script.new_id(self.sender)

    def meta(self, **overrides: Any) -> dict[str, Any]:
        meta = self.script.meta()
        names = {"version": META_VERSION, "capabilities": META_CAPABILITIES}
        for name, value in overrides.items():
            key = names.get(name, name)
            if value is None:
                meta.pop(key, None)
            else:
                meta[key] = value
        return meta

    def valid(self, kinds: Sequence[str]) -> dict[str, Any]:
        s = self.script
        return valid_message(s, kinds if kinds_of(s, kinds) else ("notification",))

    def requests_possible(self) -> bool:
        return can_request(self.script, self.sender)

    def answers_possible(self) -> bool:
        return can_request(self.script, self.script.receiver)

    def answered_ids(self, *, integers: bool = False) -> list[RequestId]:
        return [self.script.answered(self.sender)]

    def some_request(self) -> tuple[str, Any]:
        s = self.script
        method = s.draw(st.sampled_from(s.requests_of(s.sender)))
        return method, s.params(s.sender, method)

    def reusable_ids(self) -> list[tuple[RequestId, str]] | str:
        s = self.script
        if not s.legacy:
            return [(s.listen(listen_flags(s), ack=s.draw(st.booleans())), "a listen in flight")]
        ways = ["an answered request", "a refused request"]
        if s.sender is Role.CLIENT:
            ways.append("the initialize request")
        way = s.draw(st.sampled_from(ways))
        if way == "the initialize request":
            assert s.init_id is not None
            rid = s.init_id
        else:
            rid = s.request(s.sender, "ping")
            if way == "a refused request":
                s.add(s.receiver, error_msg(rid, int(ErrorCode.INTERNAL_ERROR), "refused"))
            else:
                s.respond(s.receiver, rid, {})
        s.filler()
        return [(rid, way)]

    def twin_ids(self) -> list[tuple[RequestId, RequestId]] | str:
        s = self.script
        used = s.used[s.sender]
        n = s.draw(st.integers(-5, 2**31))
        while {key_of(n), key_of(str(n))} & used:
            n += 1
        first: RequestId
        twin: RequestId
        first, twin = (n, str(n)) if s.draw(st.booleans()) else (str(n), n)
        s.use(s.sender, twin)
        if s.legacy:
            s.request(s.sender, "ping", rid=first)
            s.respond(s.receiver, first, {})
        else:
            s.listen(listen_flags(s), ack=s.draw(st.booleans()), rid=first)
        return [(first, twin)]

    def stray_ids(self) -> list[tuple[RequestId, str]]:
        s = self.script
        receiver = s.receiver
        method = receiver_request_method(s)
        params = {"_meta": s.meta()} if not s.legacy else None
        ways = ["a request never sent"]
        if can_request(s, receiver):
            ways += ["an answered request", "the same digits as a string or number"]
        way = s.draw(st.sampled_from(ways))
        rid: RequestId
        if way == "a request never sent":
            rid = s.new_id(receiver)
        elif way == "an answered request":
            rid = s.request(receiver, method, params)
            s.respond(s.sender, rid, s.result(method))
        else:
            used = s.used[receiver]
            n = s.draw(st.integers(0, 2**31))
            while {key_of(n), key_of(str(n))} & used:
                n += 1
            asked: RequestId
            asked, rid = (n, str(n)) if s.draw(st.booleans()) else (str(n), n)
            s.request(receiver, method, params, rid=asked)
            s.use(receiver, rid)
        return [(rid, way)]

    def receivers_request(self) -> RequestId | None:
        s = self.script
        if not can_request(s, s.receiver):
            return None
        params = {"_meta": s.meta()} if not s.legacy else None
        return s.request(s.receiver, receiver_request_method(s), params)

    def result(self) -> dict[str, Any]:
        return self.script.result(receiver_request_method(self.script))

    def initialize_params(self) -> dict[str, Any] | None:
        s = self.script
        return None if s.stage == "idle" else s.initialize_params()

    def params_of(
        self,
        method: str,
        *,
        version: str | None = None,
        as_request: bool | None = None,
        sent_by: Role | None = None,
    ) -> Any:
        s = self.script
        if method == "initialize":
            return s.initialize_params()
        return s.params(sent_by or s.sender, method, version=version, as_request=as_request)

    def params_methods(self) -> list[str]:
        return params_methods_of(self.script)

    def prepare(self, method: str) -> None:
        if self.prepared:
            return
        self.prepared = True
        if method != "initialize":
            self.script.opening()
            self.script.filler()

    def log_request(self) -> bool:
        self.script.in_flight(Role.CLIENT, meta={META_LOG_LEVEL: "debug"})
        return True

    def stray_tokens(self, draw: Draw) -> list[tuple[Any, str]]:
        s = self.script
        way = s.draw(st.sampled_from(["a token never sent", "the token of an answered request"]))
        token = s.new_token()
        if way == "the token of an answered request":
            method = s.draw(st.sampled_from([m for m in s.requests_of(s.receiver) if m != LISTEN]))
            rid = s.request(s.receiver, method, s.params(s.receiver, method, token=token))
            s.respond(s.sender, rid, s.result(method))
        return [(token, way)]

    def token_request(self) -> Any:
        s = self.script
        token = s.new_token()
        s.in_flight(s.receiver, token=token)
        return token

    def cancellable(self) -> RequestId | None:
        s = self.script
        if can_request(s, s.sender):
            rid = s.in_flight(s.sender)
        else:  # (a 2026-07-28 server cancels only a client's listen stream)
            rid = s.listen(listen_flags(s), ack=s.draw(st.booleans()))
        # (An id of the receiver's own may not be the same: a cancel names either.)
        for role in Role:
            s.use(role, rid)
        return rid

    def subscribed_uri(self) -> str | None:
        s = self.script
        uri = "file:///" + s.draw(st.text("abcxyz", min_size=1, max_size=6))
        rid = s.request(Role.CLIENT, "resources/subscribe", {"uri": uri})
        s.respond(Role.SERVER, rid, {})
        return uri

    def receiver_versions(self) -> tuple[str, ...] | None:
        return (self.version,)

    def taken(self, rid: RequestId) -> bool:
        return key_of(rid) in self.script.used[self.sender]


#: How the script of a repaired twin is made from the near miss's (finished) script.
Repair = Callable[[Script], Script]


def _opened(s: Script) -> None:
    s.opening()


def _maybe_opened(s: Script) -> None:
    if not s.legacy or s.draw(st.booleans()):
        s.opening()


def _opened_filled(s: Script) -> None:
    _opened(s)
    s.filler()


def _maybe_opened_filled(s: Script) -> None:
    _maybe_opened(s)
    s.filler()


def _nothing(s: Script) -> None:
    """(The builder says where the script must be: :meth:`ScriptGround.prepare`.)"""


def _lacking_request_gate(s: Script) -> Repair:
    """The receiver lacks the capability that gates a request of the sender's."""
    spec, receiver = s.spec, s.receiver
    # (Requests of one direction only: the probe leaves a peer's tasks/* alone.)
    one_way = [
        m
        for m in gated(spec, s.sender, Kind.REQUEST)
        if spec.methods[m].direction is SENDS[s.sender]
    ]
    method = s.draw(st.sampled_from(one_way))
    full = s.caps[receiver]
    s.caps[receiver] = without(full, spec.methods[method].gate, s.draw(st.booleans()))
    s.opening()
    key = "client_caps" if receiver is Role.CLIENT else "server_caps"
    return lambda done: done.recap(**{key: full})


def _lacking_subcapability(s: Script) -> Repair:
    """The client lacks a sub-capability a server's request may need."""
    spec = s.spec
    full = s.caps[Role.CLIENT]
    ways = []
    if spec.elicitation_modes and may_send(spec, Role.SERVER, "elicitation/create"):
        ways += ["url", "form"]
    if spec.sampling_tools and may_send(spec, Role.SERVER, "sampling/createMessage"):
        ways += ["tools", "context"]
    way = s.draw(st.sampled_from(ways))
    lacking = copy.deepcopy(full)
    if way in ("url", "form"):
        lacking["elicitation"] = {"form": {}} if way == "url" else {"url": {}}
    else:
        lacking["sampling"] = {k: v for k, v in full["sampling"].items() if k != way}
    s.caps[Role.CLIENT] = lacking
    s.opening()
    return lambda done: done.recap(client_caps=full)


def _lacking_notification_gate(s: Script) -> Repair:
    """The sender lacks the capability that gates one of its notifications."""
    spec, sender = s.spec, s.sender
    needs_state = STREAM_NOTIFICATIONS if spec.policy.listen_streams else {UPDATED}
    methods = [m for m in gated(spec, sender, Kind.NOTIFICATION) if m not in needs_state]
    method = s.draw(st.sampled_from(methods))
    full = s.caps[sender]
    s.caps[sender] = without(full, spec.methods[method].gate, s.draw(st.booleans()))
    s.opening()
    key = "client_caps" if sender is Role.CLIENT else "server_caps"
    return lambda done: done.recap(**{key: full})


def _sized_maybe_opened(s: Script) -> None:
    s.max_message_size = s.ctx.max_message_size
    _maybe_opened(s)


def _handshake_to_any_stage(s: Script) -> None:
    s.handshake(s.draw(st.sampled_from(["initializing", "initialized", "operating"])))
    s.filler()


#: Where the script of each rule's fault starts (what a live peer's state would be): by
#: default an opened session. A setup may return how to make the script of the repaired
#: twin from the finished script (default: the same script).
_SETUPS: Final[Mapping[str, Callable[[Script], Repair | None]]] = {
    "envelope.parse-error": _maybe_opened_filled,
    "envelope.invalid-request": _maybe_opened,
    "envelope.invalid-response": _maybe_opened,
    "envelope.batch-not-allowed": _maybe_opened,
    "envelope.empty-batch": _opened_filled,
    "envelope.oversized-message": _sized_maybe_opened,
    "lifecycle.second-initialize": _handshake_to_any_stage,
    "capability.undeclared-server-capability": _lacking_request_gate,
    "capability.undeclared-client-capability": _lacking_request_gate,
    "capability.undeclared-client-subcapability": _lacking_subcapability,
    "capability.undeclared-notification": _lacking_notification_gate,
    "params.invalid": _nothing,
}


def expect_of(fault: Fault) -> Expect:
    """What our own Connection must do with ``fault``'s message: the :class:`Expect` of
    its :class:`~mcp_sansio.testing.Demand` (an error under the first id it allows, with
    the rule's code)."""
    due = fault.expect
    if due.reply == "error":
        return Expect(
            reply="error",
            code=RULES[fault.rule].code,
            id=due.ids[0] if due.ids else None,
            data=fault.data,
            data_keys=fault.data_keys,
        )
    if due.reply == "result":
        return Expect(reply="result", id=due.ids[0] if due.ids else None)
    return NO_REPLY


@st.composite
def from_fault(
    draw: st.DrawFn, ctx: Ctx, name: str, builder: FaultBuilder | None = None
) -> NearMiss:
    s = Script(draw, ctx)
    setup = _SETUPS.get(name, _opened)
    repair = setup(s)
    ground = ScriptGround(s)
    ground.prepared = setup is not _nothing

    def variation(strategy: st.SearchStrategy[Any], canonical: Any, /) -> Any:
        return draw(strategy)

    fault = (builder or FAULTS[name])(ground, variation)
    assert not isinstance(fault, str), (name, ctx.spec.version, fault)
    message = fault.message + b"\n" if isinstance(fault.message, bytes) else fault.message
    if fault.repaired is None:
        repaired = None
    elif fault.repaired_alone:
        repaired = Script(draw, ctx).scenario(fault.repaired)
    else:
        repaired = (s if repair is None else repair(s)).scenario(fault.repaired)
    return s.near(name, message, expect_of(fault), repaired, fault.why)


def params_invalid_near(
    ctx: Ctx, methods: frozenset[str] | None = None
) -> st.SearchStrategy[NearMiss]:
    """The near misses of ``params.invalid`` for ``methods`` only (default: all)."""
    return from_fault(ctx, "params.invalid", functools.partial(invalid_params, methods=methods))
