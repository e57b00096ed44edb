"""Hypothesis stateful tests: a client and a server :class:`Connection` wired back to back.

Each machine owns a client and a server and two one-way wires (FIFO queues of the bytes
each side's ``send()`` returned). Rules pick random *legal* actions for the current state
(handshake steps, requests the negotiated version and capabilities allow in both
directions, answers with results or errors, increasing progress, cancellation, ping,
list-changed and resource notifications, logging, batches in 2025-03-26, and in
2026-07-28 ``server/discover``, ``input_required`` answers and their retries, listen
streams with their acknowledgement); delivering is a rule of its own, so messages cross
on the wire (a cancel and the answer it races with, a progress notification and a
cancel…) and arrive split into random chunks. Each action must be accepted by ``send()``,
its bytes must be exactly the event (plus the ``_meta`` a stateless client fills in and
the ``resultType`` a stateless server adds), and the peer's ``next_event()`` must give back
exactly that event, except that the late answer to a request its receiver has cancelled is
dropped and a cancel for a request that is no longer in flight is ignored.

Other rules pick random *illegal* actions (a reused id, an answer to no request, an
undeclared capability, a method in the wrong direction, a request before ``initialize``,
a second ``initialize``, decreasing progress, a cancel of ``initialize``, a log message
below the level, a stream notification before its acknowledgement, …): ``send()`` must
raise :class:`LocalProtocolError` and change nothing (public state and private
attributes), and the same message forced onto the wire as raw bytes must come out of the
peer as an :class:`InvalidMessage` with the right code (with a reply for requests, none for
notifications and responses), or be ignored where the specification says so.

Invariants: each side's ``outstanding`` and ``owed`` equal the model's, in order; when both
wires are empty, one side's ``outstanding`` equals the other's ``owed``; the lifecycle state,
era and version are the model's; every request gets exactly one answer, or is listed in
``ConnectionClosed.unanswered`` when the peer closes (checked at teardown, with the
half-close rule: answers still go out, new requests do not).

One machine per configuration: the initialize era at each of its four versions (random
client and server capabilities, the client asking for the version itself or for its own
newest one, optionally after a ``server/discover`` probe refused by a server of the
initialize era) and the stateless era (a stateless-only or a dual-era client and server).

Known bugs met on the way are pinned by ``test_bug_*`` tests in ``test_connection_fuzz.py``
(strict xfails); where a rule runs into one of them the machine accepts the buggy outcome
and says so in the notes, unless ``MCP_SANSIO_KNOWN_BUGS=fail`` is set.
"""

from __future__ import annotations

import itertools
import os
import sys
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Final

import orjson
import pytest
from _pair import (
    ALL,
    META_CAPABILITIES,
    META_CLIENT_INFO,
    META_LOG_LEVEL,
    META_SUBSCRIPTION,
    META_VERSION,
    MODERN,
    deep_state,
    drain,
    json_equal,
    observable,
)
from hypothesis import HealthCheck, note, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
)

from mcp_sansio import (
    OMITTED,
    Batch,
    Connection,
    ConnectionClosed,
    Era,
    ErrorResponse,
    Event,
    InputRequired,
    InvalidMessage,
    LocalProtocolError,
    Message,
    Notification,
    Request,
    RequestId,
    Response,
    Role,
    State,
)

STRICT_KNOWN_BUGS: Final = os.environ.get("MCP_SANSIO_KNOWN_BUGS") == "fail"

C: Final = Role.CLIENT
S: Final = Role.SERVER
LEVELS: Final = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
URIS: Final = ("file:///a", "file:///b", "file:///a/x")
INVALID_REQUEST: Final = -32600
METHOD_NOT_FOUND: Final = -32601
INVALID_PARAMS: Final = -32602


def _profile_settings(divisor: int, steps: int) -> settings:
    """The loaded profile (tests/conftest.py: ``default`` or ``long``), with fewer
    examples per machine: each example is a whole run of ``steps`` steps."""
    base = settings()
    return settings(
        base,
        max_examples=max(5, base.max_examples // divisor),
        stateful_step_count=steps,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
    )


# --------------------------------------------------------------------------- the model


@dataclass
class Pending:
    """A request in flight, as the model knows it."""

    id: RequestId
    method: str
    params: Any  # as the peer sees them
    sender: Role
    token: RequestId | None = None
    progress: float | None = None  # the last progress value sent for it
    log_level: str | None = None  # 2026: _meta logLevel
    caps: Mapping[str, Any] = field(default_factory=dict)  # 2026: the request's client capabilities
    acked: bool = False  # 2026 listen: acknowledgement sent
    granted: frozenset[str] = frozenset()  # 2026 listen: notification methods and URIs granted


@dataclass
class Wired:
    """One line on a wire: its bytes and what the peer must make of it."""

    data: bytes
    events: list[Message]


@dataclass
class Tolerated:
    """Where a known bug makes the peer produce an InvalidMessage (no reply) although the
    correct outcome is nothing: a notification that raced with our cancel."""

    reason: str


@dataclass
class ExpectInvalid:
    """The peer must produce an InvalidMessage with this code (and a reply or not)."""

    code: int | tuple[int, ...]
    reply: bool
    reply_id: Any = ...
    #: A known bug: what it makes the peer produce instead, and the test that pins it.
    known_bug: tuple[Callable[[Event], bool], str] | None = None


Expected = Event | Tolerated | ExpectInvalid


@dataclass
class Illegal:
    """An illegal action: ``send()`` must refuse it; the same message as raw bytes must give
    ``outcome`` at the peer (``None``: ignored, no event)."""

    name: str
    sender: Role
    event: Message
    outcome: ExpectInvalid | None
    raw: Any = None  # the JSON to inject, when it differs from the event's
    after: Callable[[list[Event]], None] | None = None  # model update after the injection
    local_code: int | None = None  # the LocalProtocolError's code, where it must match


def _wire(event: Message) -> dict[str, Any]:
    """The JSON-RPC object of a message event."""
    if isinstance(event, Request):
        d: dict[str, Any] = {"jsonrpc": "2.0", "id": event.id, "method": event.method}
        if event.params is not None:
            d["params"] = event.params
        return d
    if isinstance(event, Notification):
        d = {"jsonrpc": "2.0", "method": event.method}
        if event.params is not None:
            d["params"] = event.params
        return d
    if isinstance(event, Response):
        return {"jsonrpc": "2.0", "id": event.id, "result": event.result}
    error: dict[str, Any] = {"code": event.code, "message": event.message}
    if event.data is not OMITTED:
        error["data"] = event.data
    return {"jsonrpc": "2.0", "id": event.id, "error": error}


def _same(expected: Event, got: Event) -> bool:
    """Event equality with JSON semantics (types of ids matter: ``"1"`` is not ``1``)."""
    if type(expected) is not type(got):
        return False
    if isinstance(expected, InputRequired):
        assert isinstance(got, InputRequired)
        return (
            json_equal(expected.id, got.id)
            and json_equal(expected.result, got.result)
            and got.request.method == expected.request.method
            and json_equal(got.request.id, expected.request.id)
            and json_equal(got.request.params, expected.request.params)
        )
    if isinstance(expected, (Request, Notification, Response, ErrorResponse)):
        return json_equal(_wire(expected), _wire(got))  # type: ignore[arg-type]
    return expected == got


def _cap(caps: Mapping[str, Any] | None, *path: str) -> bool:
    """Whether ``caps`` declares the capability at ``path`` (present, not false/null)."""
    value: Any = caps or {}
    for key in path:
        if not isinstance(value, Mapping):
            return False
        value = value.get(key)
        if value is None or value is False:
            return False
    return True


def _chunks(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({c % (len(data) + 1) for c in cuts} | {0, len(data)})
    return [data[a:b] for a, b in itertools.pairwise(points) if b > a]


results: st.SearchStrategy[dict[str, Any]] = st.fixed_dictionaries(
    {},
    optional={
        "content": st.just([{"type": "text", "text": "x"}]),
        "isError": st.booleans(),
        "nextCursor": st.sampled_from(("c1", "")),
        "_meta": st.just({"k": [1, "1", 1.5, None, True]}),
        "structuredContent": st.fixed_dictionaries({"n": st.integers(-(2**63), 2**63 - 1)}),
    },
)
error_codes: st.SearchStrategy[int] = st.sampled_from((-32603, -32602, -32601, -32002, -1, 1, 42))


# --------------------------------------------------------------------------- the machine


class PairMachine(RuleBasedStateMachine):
    """What both eras share: wires, delivery, answers, cancels, progress, illegal actions
    and the invariants. Subclasses add the era's own rules."""

    ERA: ClassVar[Era]

    def __init__(self) -> None:
        super().__init__()
        self.ready = False
        self.conn: dict[Role, Connection] = {}
        # The messages each role has sent and the peer has not received yet.
        self.wire: dict[Role, deque[Wired]] = {C: deque(), S: deque()}
        # The role's requests waiting for their answer (its ``outstanding``).
        self.out: dict[Role, dict[RequestId, Pending]] = {C: {}, S: {}}
        # The peer's requests the role has received and not answered (its ``owed``).
        self.owed: dict[Role, dict[RequestId, Pending]] = {C: {}, S: {}}
        # The role's requests it cancelled, whose late answer may still arrive.
        self.cancelled: dict[Role, set[RequestId]] = {C: set(), S: set()}
        # The peer's requests whose cancel the role received (answering them writes nothing).
        self.cancel_got: dict[Role, dict[RequestId, Pending]] = {C: {}, S: {}}
        # The role's requests whose answer arrived normally.
        self.done: dict[Role, dict[RequestId, Pending]] = {C: {}, S: {}}
        self.used: dict[Role, set[tuple[type, RequestId]]] = {C: set(), S: set()}
        self.counter: dict[Role, int] = {C: 1, S: 1}
        self.tokens = 0
        self.raw_ids = 0
        self.state: dict[Role, State] = {C: State.IDLE, S: State.IDLE}
        self.version: str | None = None
        self.cc: dict[str, Any] = {}
        self.sc: dict[str, Any] = {}
        self.ledger: dict[tuple[Role, RequestId, int], str] = {}  # request → status
        self.serial = 0
        self.sent: dict[Role, dict[RequestId, Pending]] = {C: {}, S: {}}  # every request, by id
        self.tolerated = 0

    # ------------------------------------------------------------------ helpers

    def _fresh_id(self, role: Role, data: st.DataObject) -> RequestId:
        """A new id for ``role``: an integer, or sometimes the same number as a string (so
        ``1`` and ``"1"`` are both used), never one in use, never one already used in the
        initialize era, and in the stateless era sometimes one that was answered before."""
        if self.ERA is Era.STATELESS and self.done[role] and data.draw(st.integers(0, 3)) == 0:
            candidates = [
                rid
                for rid in self.done[role]
                if rid not in self.out[role] and rid not in self.cancelled[role]
            ]
            if candidates:
                return data.draw(st.sampled_from(candidates))
        twins = [
            str(i)
            for kind, i in self.used[role]
            if kind is int and (str, str(i)) not in self.used[role] and str(i) not in self.out[role]
        ]
        if twins and data.draw(st.integers(0, 3)) == 0:
            return data.draw(st.sampled_from(sorted(twins)))  # "1" after 1: another id
        while True:
            n = self.counter[role]
            self.counter[role] += 1
            rid: RequestId = n
            if (type(rid), rid) not in self.used[role] and rid not in self.out[role]:
                return rid

    def _token(self, data: st.DataObject) -> RequestId:
        self.tokens += 1
        return f"tok{self.tokens}" if data.draw(st.booleans()) else 10_000 + self.tokens

    def _raw_id(self) -> str:
        self.raw_ids += 1
        return f"raw-{self.raw_ids}"

    def _stateless_client(self) -> bool:
        return self.ERA is Era.STATELESS

    def _fill_meta(self, params: Any) -> Any:
        """The params a stateless client puts on the wire: its ``_meta`` keys filled in."""
        params = dict(params or {})
        meta = dict(params.get("_meta") or {})
        meta.setdefault(META_VERSION, MODERN)
        meta.setdefault(META_CAPABILITIES, dict(self.cc))
        meta.setdefault(META_CLIENT_INFO, dict(self.conn[C].config.implementation))
        params["_meta"] = meta
        return params

    def _normalize(self, role: Role, event: Message) -> Message:
        """What the peer must see for ``event`` sent by ``role``."""
        if isinstance(event, Request) and role is C and self._stateless_client():
            return Request(id=event.id, method=event.method, params=self._fill_meta(event.params))
        if (
            isinstance(event, Response)
            and role is S
            and self.ERA is Era.STATELESS
            and "resultType" not in event.result
        ):
            return Response(id=event.id, result={**event.result, "resultType": "complete"})
        return event

    def _send(
        self, role: Role, event: Message | Batch, members: list[Message] | None = None
    ) -> bytes:
        """``send()`` must accept ``event``; its bytes must be the normalized event, and they
        go on the wire (nothing at all for an answer to a request the peer cancelled)."""
        conn = self.conn[role]
        note(f"{role.value} sends {event!r}")
        if isinstance(event, Batch):
            expected = [self._normalize(role, m) for m in (members or list(event.events))]
        else:
            expected = [self._normalize(role, event)]
        expected = [m for m in expected if not self._silenced(role, m)]
        data = conn.send(event)
        if not expected:
            assert data == b"", (event, data)
            return data
        assert data.endswith(b"\n"), data
        assert data.count(b"\n") == 1, data
        wire = orjson.loads(data)
        if isinstance(event, Batch):
            assert isinstance(wire, list), wire
            assert json_equal(wire, [_wire(m) for m in expected]), (wire, expected)
        else:
            assert json_equal(wire, _wire(expected[0])), (wire, expected[0])
        self.wire[role].append(Wired(data, expected))
        return data

    def _silenced(self, role: Role, message: Message) -> bool:
        """An answer to a request the peer cancelled: ``send()`` writes nothing for it."""
        return (
            isinstance(message, (Response, ErrorResponse)) and message.id in self.cancel_got[role]
        )

    def _request(self, role: Role, event: Request, pending: Pending) -> None:
        """Send a legal request and record it."""
        self._send(role, event)
        self._record_request(role, event, pending)

    def _record_request(self, role: Role, event: Request, pending: Pending) -> None:
        self.out[role][event.id] = pending
        self.sent[role][event.id] = pending
        self.used[role].add((type(event.id), event.id))
        self.serial += 1
        self.ledger[(role, event.id, self.serial)] = "out"
        self.done[role].pop(event.id, None)

    def _ledger_close(self, role: Role, rid: RequestId, status: str) -> None:
        for key in sorted(
            (k for k in self.ledger if k[0] is role and k[1] == rid and type(k[1]) is type(rid)),
            key=lambda k: k[2],
        ):
            if self.ledger[key] == "out":
                self.ledger[key] = status
                return
        raise AssertionError(f"no request {rid!r} of the {role.value} in the ledger")

    def _answer_sent(self, role: Role, rid: RequestId) -> None:
        """``role`` answered the peer's request ``rid`` (or its cancel made it void)."""
        if rid in self.cancel_got[role]:
            del self.cancel_got[role][rid]
        else:
            del self.owed[role][rid]

    # ------------------------------------------------------------------ delivery

    def _arrival(self, receiver: Role, event: Message) -> list[Expected]:
        """Update the model for ``event`` arriving at ``receiver``; what it must produce."""
        if isinstance(event, Request):
            return self._arrival_request(receiver, event)
        if isinstance(event, Notification):
            return self._arrival_notification(receiver, event)
        rid = event.id
        if rid in self.cancelled[receiver]:
            self.cancelled[receiver].discard(rid)
            return []  # the late answer to a request we cancelled: dropped
        assert rid is not None
        pending = self.out[receiver].pop(rid)
        self._ledger_close(receiver, rid, "answered")
        self.done[receiver][rid] = pending
        return self._answered(receiver, pending, event)

    def _arrival_request(self, receiver: Role, event: Request) -> list[Expected]:
        pending = self.sent[receiver.peer][event.id]
        self.owed[receiver][event.id] = pending
        return [event]

    def _arrival_notification(self, receiver: Role, event: Notification) -> list[Expected]:
        params = event.params or {}
        if event.method == "notifications/cancelled":
            rid = params["requestId"]
            if rid in self.owed[receiver]:
                self.cancel_got[receiver][rid] = self.owed[receiver].pop(rid)
                return [event]
            return []  # a cancel of a request that is no longer in flight: ignored
        if event.method == "notifications/progress":
            token = params["progressToken"]
            if not any(
                p.token == token and type(p.token) is type(token)
                for p in self.out[receiver].values()
            ):
                return [Tolerated("progress for a request we cancelled while it was on the wire")]
        return [event]

    def _answered(self, requester: Role, pending: Pending, event: Message) -> list[Expected]:
        return [event]

    def _deliver(self, receiver: Role, cuts: list[int]) -> list[InvalidMessage]:
        """Deliver the oldest message on the wire to ``receiver``, in chunks; check what
        comes out; return the InvalidMessages (which the caller may answer)."""
        wired = self.wire[receiver.peer].popleft()
        conn = self.conn[receiver]
        for chunk in _chunks(wired.data, cuts):
            conn.receive_data(chunk)
        got = drain(conn)
        note(f"{receiver.value} receives {wired.data!r} -> {got!r}")
        expected: list[Expected] = []
        for message in wired.events:
            expected.extend(self._arrival(receiver, message))
        return self._match(expected, got)

    def _match(self, expected: list[Expected], got: list[Event]) -> list[InvalidMessage]:
        invalid: list[InvalidMessage] = []
        rest = list(got)
        for want in expected:
            if isinstance(want, Tolerated):
                if (
                    rest
                    and isinstance(rest[0], InvalidMessage)
                    and rest[0].reply is None
                    and not STRICT_KNOWN_BUGS
                ):
                    note(f"known bug tolerated: {want.reason}: {rest[0]!r}")
                    self.tolerated += 1
                    rest.pop(0)
                continue
            assert rest, (expected, got)
            item = rest.pop(0)
            if isinstance(want, ExpectInvalid) and want.known_bug and want.known_bug[0](item):
                assert not STRICT_KNOWN_BUGS, (want, item)
                note(f"known bug tolerated ({want.known_bug[1]}): {item!r}")
                self.tolerated += 1
                continue
            if isinstance(want, ExpectInvalid):
                assert isinstance(item, InvalidMessage), (want, item)
                codes = want.code if isinstance(want.code, tuple) else (want.code,)
                assert item.code in codes, (want, item)
                if want.reply:
                    assert item.reply is not None, item
                    assert item.reply.code == item.code
                    if want.reply_id is not ...:
                        assert json_equal(item.reply.id, want.reply_id), (want, item)
                else:
                    assert item.reply is None, item
                invalid.append(item)
                continue
            assert _same(want, item), (want, item)
        assert not rest, (expected, got)
        return invalid

    def _reply_to(self, role: Role, invalid: list[InvalidMessage], *, deliver: bool) -> None:
        """Send the replies of InvalidMessages: onto the wire, or dropped (for messages the
        test injected, whose sender never expects them)."""
        for item in invalid:
            if item.reply is None:
                continue
            data = self.conn[role].send(item.reply)
            assert data, item
            wire = orjson.loads(data)
            assert wire["error"]["code"] == item.code, wire
            assert json_equal(wire["id"], item.reply.id), wire
            if deliver:
                self.wire[role].append(Wired(data, [item.reply]))

    def _flush(self) -> None:
        while self.wire[C] or self.wire[S]:
            for receiver in (S, C):
                while self.wire[receiver.peer]:
                    self._reply_to(receiver, self._deliver(receiver, []), deliver=True)

    # ------------------------------------------------------------------ shared rules

    @precondition(lambda self: self.ready and bool(self.wire[C] or self.wire[S]))
    @rule(data=st.data())
    def deliver(self, data: st.DataObject) -> None:
        receivers = [r for r in (C, S) if self.wire[r.peer]]
        receiver = data.draw(st.sampled_from(receivers))
        for _ in range(data.draw(st.integers(1, len(self.wire[receiver.peer])))):
            cuts = data.draw(st.lists(st.integers(0, 10_000), max_size=3))
            self._reply_to(receiver, self._deliver(receiver, cuts), deliver=True)

    def _can_answer(self, role: Role, pending: Pending) -> bool:
        return True

    def _answer(self, role: Role, pending: Pending, data: st.DataObject) -> None:
        raise NotImplementedError

    @precondition(lambda self: self.ready and any(self.owed[r] for r in (C, S)))
    @rule(data=st.data())
    def answer(self, data: st.DataObject) -> None:
        """Answer requests the peer sent (with results or errors), up to three."""
        for _ in range(data.draw(st.integers(1, 3))):
            options = [
                (r, p) for r in (C, S) for p in self.owed[r].values() if self._can_answer(r, p)
            ]
            if not options:
                return
            role, pending = data.draw(st.sampled_from(options))
            self._answer(role, pending, data)

    @precondition(lambda self: self.ready and any(self.cancel_got[r] for r in (C, S)))
    @rule(data=st.data())
    def answer_cancelled(self, data: st.DataObject) -> None:
        """Answer a request whose cancel has arrived: send() writes nothing."""
        role = data.draw(st.sampled_from([r for r in (C, S) if self.cancel_got[r]]))
        rid = data.draw(st.sampled_from(list(self.cancel_got[role])))
        event: Message = (
            ErrorResponse(id=rid, code=-32603, message="late")
            if data.draw(st.booleans())
            else Response(id=rid, result={})
        )
        assert self.conn[role].send(event) == b""
        del self.cancel_got[role][rid]

    def _cancellable(self, role: Role) -> list[Pending]:
        return [
            p for p in self.out[role].values() if p.method not in ("initialize", "server/discover")
        ]

    def _may_notify(self, role: Role) -> bool:
        return True

    @precondition(lambda self: self.ready)
    @rule(data=st.data())
    def cancel(self, data: st.DataObject) -> None:
        """Cancel one of our requests in flight (one time in three: rules are picked
        uniformly, and requests should mostly live long enough to be answered)."""
        options = [(r, p) for r in (C, S) for p in self._cancellable(r) if self._may_notify(r)]
        if not options or data.draw(st.integers(0, 2)) != 0:
            return
        role, pending = data.draw(st.sampled_from(options))
        self._cancel(role, pending, data)

    def _cancel(self, role: Role, pending: Pending, data: st.DataObject) -> None:
        params: dict[str, Any] = {"requestId": pending.id}
        if data.draw(st.booleans()):
            params["reason"] = "timeout"
        self._send(role, Notification(method="notifications/cancelled", params=params))
        del self.out[role][pending.id]
        self.cancelled[role].add(pending.id)
        self._ledger_close(role, pending.id, "cancelled")

    def _progress_senders(self) -> list[Role]:
        return [C, S]

    @precondition(lambda self: self.ready)
    @rule(data=st.data())
    def progress(self, data: st.DataObject) -> None:
        """Report progress on a request we owe that carries a progressToken."""
        options = [
            (r, p)
            for r in self._progress_senders()
            for p in self.owed[r].values()
            if p.token is not None and self._may_notify(r)
        ]
        if not options:
            return
        role, pending = data.draw(st.sampled_from(options))
        last = (
            pending.progress
            if pending.progress is not None
            else data.draw(st.sampled_from((-1, 0)))
        )
        step = data.draw(st.sampled_from((1, 0.5, 2, 1e-3, 10**6)))
        value: float = last + step
        if data.draw(st.booleans()) and float(value).is_integer():
            value = int(value)
        params: dict[str, Any] = {"progressToken": pending.token, "progress": value}
        if data.draw(st.booleans()):
            params["total"] = 10**7
        if data.draw(st.booleans()) and self.version != "2024-11-05":
            params["message"] = "working"
        self._send(role, Notification(method="notifications/progress", params=params))
        pending.progress = value

    # ------------------------------------------------------------------ illegal actions

    def _illegal_cases(self, data: st.DataObject) -> list[Callable[[], Illegal | None]]:
        return [
            lambda: self._illegal_unknown_response(data),
            lambda: self._illegal_double_answer(data),
            lambda: self._illegal_cancel_unknown(data),
            lambda: self._illegal_progress_decrease(data),
            lambda: self._illegal_progress_unknown(data),
            lambda: self._illegal_unknown_method(data),
        ]

    @precondition(lambda self: self.ready)
    @rule(data=st.data())
    def illegal(self, data: st.DataObject) -> None:
        """An illegal action: refused by send() without any change; as raw bytes, reported
        by the peer with the right code (or ignored where the spec says so)."""
        self._flush()
        cases = self._illegal_cases(data)
        order = data.draw(st.permutations(range(len(cases))))
        for index in order:
            case = cases[index]()
            if case is not None:
                self._check_illegal(case)
                return

    def _check_illegal(self, case: Illegal) -> None:
        sender = self.conn[case.sender]
        receiver = self.conn[case.sender.peer]
        note(f"illegal ({case.name}): {case.sender.value} sends {case.event!r}")
        before, before_deep = observable(sender), deep_state(sender)
        with pytest.raises(LocalProtocolError) as info:
            sender.send(case.event)
        note(f"  refused: {info.value!r}")
        if case.local_code is not None:
            assert info.value.code == case.local_code, (case, info.value)
        assert observable(sender) == before, case
        assert deep_state(sender) == before_deep, case
        raw = case.raw if case.raw is not None else _wire(case.event)
        receiver.receive_data(orjson.dumps(raw) + b"\n")
        got = drain(receiver)
        note(f"  peer: {got!r}")
        if case.outcome is None:
            assert got == [], (case, got)
        else:
            invalid = self._match([case.outcome], got)
            self._reply_to(case.sender.peer, invalid, deliver=False)
        if case.after is not None:
            case.after(got)

    def _illegal_unknown_response(self, data: st.DataObject) -> Illegal:
        role = data.draw(st.sampled_from((C, S)))
        rid = self._raw_id()
        event: Message = (
            Response(id=rid, result={})
            if data.draw(st.booleans())
            else ErrorResponse(id=rid, code=-1, message="x")
        )
        return Illegal(
            "answer to no request", role, event, ExpectInvalid(INVALID_REQUEST, reply=False)
        )

    def _illegal_double_answer(self, data: st.DataObject) -> Illegal | None:
        options = [
            (r, p)
            for r in (C, S)
            for rid, p in self.done[r.peer].items()
            if rid not in self.owed[r]
            and rid not in self.cancel_got[r]
            and rid not in self.out[r.peer]
        ]
        if not options:
            return None
        role, pending = data.draw(st.sampled_from(options))
        return Illegal(
            "second answer",
            role,
            Response(id=pending.id, result={}),
            ExpectInvalid(INVALID_REQUEST, reply=False),
        )

    def _illegal_cancel_unknown(self, data: st.DataObject) -> Illegal | None:
        role = data.draw(st.sampled_from((C, S)))
        if not self._may_notify(role) or (self.ERA is Era.STATELESS and role is S):
            return None
        event = Notification(method="notifications/cancelled", params={"requestId": self._raw_id()})
        return Illegal("cancel of no request", role, event, None)

    def _illegal_progress_decrease(self, data: st.DataObject) -> Illegal | None:
        options = [
            (r, p)
            for r in self._progress_senders()
            for p in self.owed[r].values()
            if p.token is not None and p.progress is not None and self._may_notify(r)
        ]
        if not options:
            return None
        role, pending = data.draw(st.sampled_from(options))
        assert pending.progress is not None
        value = pending.progress - data.draw(st.sampled_from((0, 0.5, 1)))
        event = Notification(
            method="notifications/progress",
            params={"progressToken": pending.token, "progress": value},
        )
        return Illegal(
            "progress that does not increase",
            role,
            event,
            ExpectInvalid(INVALID_REQUEST, reply=False),
        )

    def _illegal_progress_unknown(self, data: st.DataObject) -> Illegal | None:
        role = data.draw(st.sampled_from(self._progress_senders()))
        if not self._may_notify(role):
            return None
        event = Notification(
            method="notifications/progress", params={"progressToken": self._raw_id(), "progress": 1}
        )
        return Illegal(
            "progress for no request", role, event, ExpectInvalid(INVALID_REQUEST, reply=False)
        )

    def _illegal_unknown_method(self, data: st.DataObject) -> Illegal | None:
        role = data.draw(st.sampled_from((C, S)))
        if not self._may_notify(role):
            return None
        if self.ERA is Era.STATELESS and role is S:
            return None  # a stateless server sends no requests at all (see its own case)
        if data.draw(st.booleans()):
            rid = self._raw_id()
            event: Message = Request(id=rid, method="foo/bar", params={})
            raw = (
                _wire(Request(id=rid, method="foo/bar", params=self._fill_meta({})))
                if self._stateless_client() and role is C
                else None
            )
            return Illegal(
                "unknown request method",
                role,
                event,
                ExpectInvalid(METHOD_NOT_FOUND, reply=True, reply_id=rid),
                raw=raw,
                after=self._decides_era if raw is not None else None,
            )
        event = Notification(method="notifications/foo", params={})
        return Illegal(
            "unknown notification method", role, event, ExpectInvalid(METHOD_NOT_FOUND, reply=False)
        )

    def _decides_era(self, got: list[Event]) -> None:
        """A stateless request with a good ``_meta`` decides a fresh server's era, even
        when its method is then refused."""
        self.state[S] = State.STATELESS

    # ------------------------------------------------------------------ invariants

    @invariant()
    def tables_match_the_model(self) -> None:
        if not self.ready:
            return
        for role in (C, S):
            conn = self.conn[role]
            assert list(conn.outstanding) == list(self.out[role]), (
                role,
                conn.outstanding,
                self.out[role],
            )
            assert [type(i) for i in conn.outstanding] == [type(i) for i in self.out[role]]
            assert list(conn.owed) == [*list(self.owed[role])], (role, conn.owed, self.owed[role])
            assert conn.state is self.state[role], (role, conn.state, self.state[role])

    @invariant()
    def quiet_wires_mirror(self) -> None:
        """With nothing on the wires, what one side waits for is what the other owes."""
        if not self.ready or self.wire[C] or self.wire[S]:
            return
        for role in (C, S):
            assert self.conn[role].outstanding == self.conn[role.peer].owed, role

    def teardown(self) -> None:
        if not self.ready or sys.exc_info()[0] is not None:
            return  # a rule failed: that is the failure to report
        self._flush()
        # The client closes its side: the server reports what the client never answered
        # and can still answer what it owes, but may not ask anything new.
        for closer in (C, S):
            other = closer.peer
            conn = self.conn[other]
            conn.receive_data(b"")
            events = drain(conn)
            assert len(events) == 1, events
            assert isinstance(events[0], ConnectionClosed), events
            closed = events[0]
            assert list(closed.unanswered) == list(self.out[other]), (closed, self.out[other])
            for rid in list(self.out[other]):
                self._ledger_close(other, rid, "unanswered")
            for rid in list(self.owed[other]):
                data = conn.send(ErrorResponse(id=rid, code=-32603, message="closing"))
                assert orjson.loads(data)["id"] == rid
            if not (self.ERA is Era.STATELESS and other is S):
                with pytest.raises(LocalProtocolError):
                    conn.send(Request(id=self._raw_id(), method="ping"))
        # Every request got exactly one fate.
        assert all(status != "out" for status in self.ledger.values()), self.ledger
        note(f"known bugs tolerated in this run: {self.tolerated}")


# --------------------------------------------------------------------------- initialize era

#: (method, capability path of the receiver, first version) for client requests.
CLIENT_REQUESTS: Final = (
    ("resources/list", ("resources",), "2024-11-05"),
    ("resources/templates/list", ("resources",), "2024-11-05"),
    ("resources/read", ("resources",), "2024-11-05"),
    ("resources/subscribe", ("resources", "subscribe"), "2024-11-05"),
    ("resources/unsubscribe", ("resources", "subscribe"), "2024-11-05"),
    ("prompts/list", ("prompts",), "2024-11-05"),
    ("prompts/get", ("prompts",), "2024-11-05"),
    ("tools/list", ("tools",), "2024-11-05"),
    ("tools/call", ("tools",), "2024-11-05"),
    ("logging/setLevel", ("logging",), "2024-11-05"),
    ("completion/complete", ("completions",), "2025-03-26"),
    ("tasks/get", ("tasks",), "2025-11-25"),
    ("tasks/result", ("tasks",), "2025-11-25"),
    ("tasks/list", ("tasks", "list"), "2025-11-25"),
    ("tasks/cancel", ("tasks", "cancel"), "2025-11-25"),
)
SERVER_REQUESTS: Final = (
    ("sampling/createMessage", ("sampling",), "2024-11-05"),
    ("roots/list", ("roots",), "2024-11-05"),
    ("elicitation/create", ("elicitation",), "2025-06-18"),
    ("tasks/get", ("tasks",), "2025-11-25"),
    ("tasks/result", ("tasks",), "2025-11-25"),
    ("tasks/list", ("tasks", "list"), "2025-11-25"),
    ("tasks/cancel", ("tasks", "cancel"), "2025-11-25"),
)
LIST_CHANGED: Final = (
    ("notifications/tools/list_changed", ("tools", "listChanged")),
    ("notifications/prompts/list_changed", ("prompts", "listChanged")),
    ("notifications/resources/list_changed", ("resources", "listChanged")),
)


def _flags(*names: str) -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        {}, optional={n: st.sampled_from((True, True, False, {})) for n in names}
    )


def _full_or_random(
    full: dict[str, Any], optional: dict[str, st.SearchStrategy[Any]]
) -> st.SearchStrategy[dict[str, Any]]:
    """Every capability declared (half the time: most rules need some), or a random subset."""
    return st.one_of(st.just(full), st.fixed_dictionaries({}, optional=optional))


def legacy_server_caps(version: str) -> st.SearchStrategy[dict[str, Any]]:
    full: dict[str, Any] = {
        "tools": {"listChanged": True},
        "prompts": {"listChanged": True},
        "resources": {"subscribe": True, "listChanged": True},
        "logging": {},
    }
    if version >= "2025-03-26":
        full["completions"] = {}
    if version >= "2025-11-25":
        full["tasks"] = {"list": {}, "cancel": {}}
    optional: dict[str, st.SearchStrategy[Any]] = {
        "tools": _flags("listChanged"),
        "prompts": _flags("listChanged"),
        "resources": _flags("subscribe", "listChanged"),
        "logging": st.just({}),
    }
    if version >= "2025-03-26":
        optional["completions"] = st.just({})
    if version >= "2025-11-25":
        optional["tasks"] = _flags("list", "cancel")
    return _full_or_random(full, optional)


def legacy_client_caps(version: str) -> st.SearchStrategy[dict[str, Any]]:
    full: dict[str, Any] = {"roots": {"listChanged": True}, "sampling": {}}
    if version >= "2025-06-18":
        full["elicitation"] = {}
    if version >= "2025-11-25":
        full.update(
            sampling={"tools": {}, "context": {}},
            elicitation={"form": {}, "url": {}},
            tasks={"list": {}, "cancel": {}},
        )
    optional: dict[str, st.SearchStrategy[Any]] = {
        "roots": _flags("listChanged"),
        "sampling": _flags("tools", "context") if version >= "2025-11-25" else st.just({}),
    }
    if version >= "2025-06-18":
        optional["elicitation"] = _flags("form", "url") if version >= "2025-11-25" else st.just({})
    if version >= "2025-11-25":
        optional["tasks"] = _flags("list", "cancel")
    return _full_or_random(full, optional)


class LegacyMachine(PairMachine):
    """The initialize era at ``VERSION``."""

    ERA = Era.INITIALIZE
    VERSION: ClassVar[str]

    @initialize(data=st.data())
    def setup(self, data: st.DataObject) -> None:
        version = self.VERSION
        self.version = version
        self.cc = data.draw(legacy_client_caps(version), label="client capabilities")
        self.sc = data.draw(legacy_server_caps(version), label="server capabilities")
        # Either the client speaks every version (and asks for one of its own, maybe after
        # a server/discover probe) and the server only VERSION, or the other way round.
        self.client_all = data.draw(st.booleans(), label="client speaks all versions")
        client_versions = ALL if self.client_all else (version,)
        server_versions = (version,) if self.client_all else ALL
        self.requested = (
            data.draw(st.sampled_from([v for v in ALL if v != MODERN]), label="requested")
            if self.client_all
            else version
        )
        self.conn = {
            C: Connection(
                C,
                versions=client_versions,
                capabilities=self.cc,
                implementation={"name": "c", "version": "1"},
                strict=True,
            ),
            S: Connection(
                S,
                versions=server_versions,
                capabilities=self.sc,
                implementation={"name": "s", "version": "1"},
                strict=True,
            ),
        }
        self.probe: RequestId | None = None  # the server/discover probe, while in flight
        self.probed = not (self.client_all and data.draw(st.booleans(), label="probe first"))
        self.init_id: RequestId | None = None
        self.server_level: str | None = None
        self.client_level: str | None = None
        self.server_subs: set[str] = set()
        self.client_subs: set[str] = set()
        self.ready = True
        if data.draw(st.integers(0, 3), label="start with the handshake done") > 0:
            # Most runs start operating (the handshake itself is a handful of rules, which
            # the rest of the runs explore in any order).
            if not self.probed:
                self.probe_first(data)
                self._flush()
            self.client_initialize(data)
            self._flush()
            self.server_answers_initialize(data, fail=False)
            self._flush()
            self.client_initialized()
            self._flush()

    def _normalize(self, role: Role, event: Message) -> Message:
        if isinstance(event, Request) and event.method == "server/discover":
            return Request(id=event.id, method=event.method, params=self._fill_meta(event.params))
        return super()._normalize(role, event)

    def _negotiated(self) -> bool:
        return self.state[C] in (State.INITIALIZED, State.OPERATING)

    def _may_notify(self, role: Role) -> bool:
        return self.state[C] is not State.PROBING

    # ------------------------------------------------------------------ handshake

    @precondition(lambda self: self.ready and not self.probed and self.state[C] is State.IDLE)
    @rule(data=st.data())
    def probe_first(self, data: st.DataObject) -> None:
        """A client that speaks both eras probes; a server of the initialize era refuses
        (-32601) and the client falls back."""
        rid = self._fresh_id(C, data)
        request = Request(id=rid, method="server/discover")
        self._request(C, request, Pending(rid, "server/discover", self._fill_meta(None), C))
        self.probe = rid
        self.probed = True
        self.state[C] = State.PROBING

    def _arrival_request(self, receiver: Role, event: Request) -> list[Expected]:
        if event.method == "server/discover":
            return [ExpectInvalid(METHOD_NOT_FOUND, reply=True, reply_id=event.id)]
        if event.method == "initialize":
            self.state[S] = State.INITIALIZING
        return super()._arrival_request(receiver, event)

    def _arrival_notification(self, receiver: Role, event: Notification) -> list[Expected]:
        if event.method == "notifications/initialized":
            self.state[S] = State.OPERATING
        return super()._arrival_notification(receiver, event)

    def _answered(self, requester: Role, pending: Pending, event: Message) -> list[Expected]:
        if pending.method == "server/discover":
            assert isinstance(event, ErrorResponse)
            self.state[C] = State.IDLE
            self.probe = None
        elif pending.method == "initialize":
            self.state[C] = State.INITIALIZED if isinstance(event, Response) else State.IDLE
            self.init_id = None
        elif isinstance(event, Response) and requester is C:
            if pending.method == "resources/subscribe":
                self.client_subs.add(pending.params["uri"])
            elif pending.method == "resources/unsubscribe":
                self.client_subs.discard(pending.params["uri"])
            elif pending.method == "logging/setLevel":
                self.client_level = pending.params["level"]
        return [event]

    @precondition(
        lambda self: (
            self.ready and self.probed and self.state[C] is State.IDLE and self.init_id is None
        )
    )
    @rule(data=st.data())
    def client_initialize(self, data: st.DataObject) -> None:
        rid = self._fresh_id(C, data)
        params = {
            "protocolVersion": self.requested,
            "capabilities": self.cc,
            "clientInfo": {"name": "c", "version": "1"},
        }
        self._request(
            C,
            Request(id=rid, method="initialize", params=params),
            Pending(rid, "initialize", params, C),
        )
        self.init_id = rid
        self.state[C] = State.INITIALIZING

    @precondition(
        lambda self: self.ready and any(p.method == "initialize" for p in self.owed[S].values())
    )
    @rule(data=st.data())
    def server_answers_initialize(self, data: st.DataObject, fail: bool = True) -> None:
        [pending] = [p for p in self.owed[S].values() if p.method == "initialize"]
        if fail and data.draw(st.integers(0, 5)) == 0:
            self._send(S, ErrorResponse(id=pending.id, code=-32603, message="not now"))
            self.state[S] = State.IDLE
        else:
            result: dict[str, Any] = {
                "protocolVersion": self.VERSION,
                "capabilities": self.sc,
                "serverInfo": {"name": "s", "version": "1"},
            }
            if data.draw(st.booleans()):
                result["instructions"] = "be nice"
            self._send(S, Response(id=pending.id, result=result))
            self.state[S] = State.INITIALIZED
        self._answer_sent(S, pending.id)

    @precondition(lambda self: self.ready and self.state[C] is State.INITIALIZED)
    @rule()
    def client_initialized(self) -> None:
        self._send(C, Notification(method="notifications/initialized"))
        self.state[C] = State.OPERATING
        assert self.conn[C].protocol_version == self.VERSION

    # ------------------------------------------------------------------ requests

    def _client_methods(self) -> list[str]:
        return [
            m
            for m, gate, first in CLIENT_REQUESTS
            if first <= self.VERSION and _cap(self.sc, *gate)
        ] + (["completion/complete"] if self.VERSION == "2024-11-05" else [])

    def _server_methods(self) -> list[str]:
        return [
            m
            for m, gate, first in SERVER_REQUESTS
            if first <= self.VERSION
            and _cap(self.cc, *gate)
            and (m != "elicitation/create" or self._elicitation_modes())
        ]

    def _elicitation_modes(self) -> list[str]:
        """The elicitation modes the client declared (2025-11-25 on: an empty object means
        form; ``{"url": false}`` declares neither, and the connection refuses both)."""
        if self.VERSION < "2025-11-25":
            return ["form"]
        elicitation = self.cc.get("elicitation") or {}
        modes = []
        if not elicitation or _cap(elicitation, "form"):
            modes.append("form")
        if _cap(elicitation, "url"):
            modes.append("url")
        return modes

    def _params(self, role: Role, method: str, data: st.DataObject) -> dict[str, Any] | None:
        params: dict[str, Any] | None
        if method in ("resources/read", "resources/subscribe", "resources/unsubscribe"):
            params = {"uri": data.draw(st.sampled_from(URIS))}
        elif method == "logging/setLevel":
            params = {"level": data.draw(st.sampled_from(LEVELS))}
        elif method in ("tools/call", "prompts/get"):
            params = {"name": "t", "arguments": {"x": data.draw(st.integers(-3, 3))}}
        elif method == "completion/complete":
            params = {
                "ref": {"type": "ref/prompt", "name": "p"},
                "argument": {"name": "a", "value": "v"},
            }
        elif method in ("tasks/get", "tasks/result", "tasks/cancel"):
            params = {"taskId": "task-1"}
        elif method == "sampling/createMessage":
            params = {
                "messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}],
                "maxTokens": 9,
            }
            if (
                self.VERSION >= "2025-11-25"
                and _cap(self.cc, "sampling", "tools")
                and data.draw(st.booleans())
            ):
                params["tools"] = []
            context = ["none"]
            if self.VERSION < "2025-11-25" or _cap(self.cc, "sampling", "context"):
                context += ["thisServer", "allServers"]
            if data.draw(st.booleans()):
                params["includeContext"] = data.draw(st.sampled_from(context))
        elif method == "elicitation/create":
            params = {"message": "name?", "requestedSchema": {"type": "object", "properties": {}}}
            if self.VERSION >= "2025-11-25":
                mode = data.draw(st.sampled_from(self._elicitation_modes()))
                if mode == "url":
                    params = {
                        "mode": "url",
                        "message": "go",
                        "url": "https://x.example",
                        "elicitationId": "e1",
                    }
                elif mode == "form" and data.draw(st.booleans()):
                    params["mode"] = "form"
        else:
            params = data.draw(st.sampled_from((None, {}, {"cursor": "c"})))
        if data.draw(st.integers(0, 2)) == 0:
            params = dict(params or {})
            params["_meta"] = {"progressToken": self._token(data)}
        return params

    def _send_request(self, role: Role, method: str, data: st.DataObject) -> None:
        rid = self._fresh_id(role, data)
        params = self._params(role, method, data)
        meta = (params or {}).get("_meta") or {}
        pending = Pending(rid, method, params, role, token=meta.get("progressToken"))
        self._request(role, Request(id=rid, method=method, params=params), pending)

    @precondition(lambda self: self.ready and self.state[C] is State.OPERATING)
    @rule(data=st.data())
    def client_request(self, data: st.DataObject) -> None:
        methods = self._client_methods()
        if methods:
            self._send_request(C, data.draw(st.sampled_from(methods)), data)

    @precondition(lambda self: self.ready and self.state[S] is State.OPERATING)
    @rule(data=st.data())
    def server_request(self, data: st.DataObject) -> None:
        methods = self._server_methods()
        if methods:
            self._send_request(S, data.draw(st.sampled_from(methods)), data)

    @precondition(lambda self: self.ready and self.state[C] is not State.PROBING)
    @rule(data=st.data(), role=st.sampled_from((C, S)))
    def ping(self, data: st.DataObject, role: Role) -> None:
        if role is S and not (self.probed and self.probe is None):
            # A server ping that reaches a probing client is refused (test_bug_ping_while_probing).
            return
        self._send_request(role, "ping", data)

    def _answer(self, role: Role, pending: Pending, data: st.DataObject) -> None:
        if pending.method == "initialize":
            return  # server_answers_initialize
        event: Message
        if data.draw(st.integers(0, 3)) == 0:
            error_data = data.draw(st.sampled_from((OMITTED, None, {"why": "x"}, [1])))
            event = ErrorResponse(
                id=pending.id, code=data.draw(error_codes), message="no", data=error_data
            )
        else:
            result = {} if pending.method == "ping" else data.draw(results)
            event = Response(id=pending.id, result=result)
            if role is S and pending.method == "resources/subscribe":
                self.server_subs.add(pending.params["uri"])
            elif role is S and pending.method == "resources/unsubscribe":
                self.server_subs.discard(pending.params["uri"])
            elif role is S and pending.method == "logging/setLevel":
                self.server_level = pending.params["level"]
        self._send(role, event)
        self._answer_sent(role, pending.id)

    def _cancellable(self, role: Role) -> list[Pending]:
        # Requests whose success changes the session (subscribe, setLevel) are not
        # cancelled: a late success would leave the two sides disagreeing.
        return [
            p
            for p in super()._cancellable(role)
            if p.method not in ("resources/subscribe", "resources/unsubscribe", "logging/setLevel")
        ]

    # ------------------------------------------------------------------ notifications

    @precondition(lambda self: self.ready and self.state[S] is State.OPERATING)
    @rule(data=st.data())
    def server_notifies(self, data: st.DataObject) -> None:
        options: list[Notification] = [
            Notification(method=m, params=data.draw(st.sampled_from((None, {}))))
            for m, gate in LIST_CHANGED
            if _cap(self.sc, *gate)
        ]
        if _cap(self.sc, "resources", "subscribe"):
            for uri in sorted(self.server_subs):
                options.append(
                    Notification(method="notifications/resources/updated", params={"uri": uri})
                )
                options.append(
                    Notification(
                        method="notifications/resources/updated", params={"uri": uri + "/deeper"}
                    )
                )
        if self.VERSION >= "2025-11-25":
            options.append(
                Notification(
                    method="notifications/tasks/status",
                    params={"taskId": "task-1", "status": "working"},
                )
            )
            if _cap(self.cc, "elicitation", "url"):
                options.append(
                    Notification(
                        method="notifications/elicitation/complete", params={"elicitationId": "e1"}
                    )
                )
        if options:
            self._send(S, data.draw(st.sampled_from(options)))

    @precondition(
        lambda self: (
            self.ready
            and self.state[S] in (State.INITIALIZING, State.INITIALIZED, State.OPERATING)
            and "logging" in self.sc
        )
    )
    @rule(data=st.data())
    def server_logs(self, data: st.DataObject) -> None:
        floor = LEVELS.index(self.server_level) if self.server_level else 0
        level = data.draw(st.sampled_from(LEVELS[floor:]))
        params: dict[str, Any] = {
            "level": level,
            "data": data.draw(st.sampled_from(("text", {"k": 1}, [1, 2]))),
        }
        if data.draw(st.booleans()):
            params["logger"] = "db"
        self._send(S, Notification(method="notifications/message", params=params))

    @precondition(lambda self: self.ready and self.state[C] is State.OPERATING)
    @rule(data=st.data())
    def client_notifies(self, data: st.DataObject) -> None:
        options: list[Notification] = []
        if _cap(self.cc, "roots", "listChanged"):
            options.append(Notification(method="notifications/roots/list_changed"))
        if self.VERSION >= "2025-11-25":
            options.append(
                Notification(
                    method="notifications/tasks/status", params={"taskId": "t", "status": "working"}
                )
            )
        if options:
            self._send(C, data.draw(st.sampled_from(options)))

    # ------------------------------------------------------------------ batches (2025-03-26)

    @precondition(
        lambda self: (
            self.ready
            and self.VERSION == "2025-03-26"
            and self.state[C] is State.OPERATING
            and self.state[S] is State.OPERATING
        )
    )
    @rule(data=st.data(), role=st.sampled_from((C, S)))
    def batch_of_requests(self, data: st.DataObject, role: Role) -> None:
        methods = (self._client_methods() if role is C else self._server_methods()) + ["ping"]
        members: list[Message] = []
        pendings: list[tuple[Request, Pending]] = []
        for _ in range(data.draw(st.integers(1, 3))):
            method = data.draw(st.sampled_from(methods))
            if method in ("logging/setLevel", "resources/subscribe", "resources/unsubscribe"):
                method = "ping"  # their effects depend on answer order; kept out of batches
            rid = self._fresh_id(role, data)
            while any(r.id == rid for r, _ in pendings):
                rid = self._fresh_id(role, data)
            params = self._params(role, method, data)
            meta = (params or {}).get("_meta") or {}
            request = Request(id=rid, method=method, params=params)
            pendings.append(
                (request, Pending(rid, method, params, role, token=meta.get("progressToken")))
            )
            members.append(request)
        if role is C and _cap(self.cc, "roots", "listChanged") and data.draw(st.booleans()):
            members.append(Notification(method="notifications/roots/list_changed"))
        if role is S and _cap(self.sc, "tools", "listChanged") and data.draw(st.booleans()):
            members.append(Notification(method="notifications/tools/list_changed"))
        self._send(role, Batch(events=tuple(members)))
        for request, pending in pendings:
            self._record_request(role, request, pending)

    @precondition(
        lambda self: (
            self.ready
            and self.VERSION == "2025-03-26"
            and self.state[C] is State.OPERATING
            and self.state[S] is State.OPERATING
            and any(len(self.owed[r]) + len(self.cancel_got[r]) >= 2 for r in (C, S))
        )
    )
    @rule(data=st.data())
    def batch_of_answers(self, data: st.DataObject) -> None:
        role = data.draw(
            st.sampled_from([r for r in (C, S) if len(self.owed[r]) + len(self.cancel_got[r]) >= 2])
        )
        candidates = [
            p
            for p in [*self.owed[role].values(), *self.cancel_got[role].values()]
            if p.method
            not in (
                "initialize",
                "resources/subscribe",
                "resources/unsubscribe",
                "logging/setLevel",
            )
        ]
        if len(candidates) < 2:
            return
        chosen = data.draw(
            st.lists(
                st.sampled_from(candidates),
                min_size=2,
                max_size=3,
                unique_by=lambda p: (type(p.id), p.id),
            )
        )
        members: list[Message] = [
            Response(id=p.id, result={})
            if data.draw(st.booleans())
            else ErrorResponse(id=p.id, code=-1, message="no")
            for p in chosen
        ]
        if all(self._silenced(role, m) for m in members):
            assert self.conn[role].send(Batch(events=tuple(members))) == b""
        else:
            self._send(role, Batch(events=tuple(members)))
        for p in chosen:
            self._answer_sent(role, p.id)

    # ------------------------------------------------------------------ illegal actions

    def _illegal_cases(self, data: st.DataObject) -> list[Callable[[], Illegal | None]]:
        return [
            *super()._illegal_cases(data),
            lambda: self._illegal_before_initialize(data),
            lambda: self._illegal_reused_id(data),
            lambda: self._illegal_undeclared(data),
            lambda: self._illegal_wrong_direction(data),
            lambda: self._illegal_second_initialize(data),
            lambda: self._illegal_initialized_early(),
            lambda: self._illegal_cancel_initialize(),
            lambda: self._illegal_server_request_early(data),
            lambda: self._illegal_undeclared_notification(data),
            lambda: self._illegal_unsubscribed_update(),
            lambda: self._illegal_log_below_level(),
            lambda: self._illegal_batch(data),
        ]

    def _illegal_before_initialize(self, data: st.DataObject) -> Illegal | None:
        # Before the server has answered initialize, on both sides (once the result is out,
        # the client's requests are open: the initialize window).
        early = (State.IDLE, State.INITIALIZING)
        if self.state[C] not in early or self.state[S] not in early or not self.probed:
            return None
        rid = self._raw_id()
        method = data.draw(st.sampled_from(("tools/list", "resources/list", "prompts/list")))
        return Illegal(
            "request before the initialize result",
            C,
            Request(id=rid, method=method, params={}),
            ExpectInvalid(INVALID_REQUEST, reply=True, reply_id=rid),
        )

    def _illegal_reused_id(self, data: st.DataObject) -> Illegal | None:
        role = data.draw(st.sampled_from((C, S)))
        if not self.used[role] or not self._may_notify(role):
            return None
        _, rid = data.draw(st.sampled_from(sorted(self.used[role], key=repr)))
        in_flight = rid in self.owed[role.peer]
        return Illegal(
            "reused request id",
            role,
            Request(id=rid, method="ping"),
            ExpectInvalid(INVALID_REQUEST, reply=True, reply_id=None if in_flight else rid),
        )

    def _illegal_undeclared(self, data: st.DataObject) -> Illegal | None:
        role = data.draw(st.sampled_from((C, S)))
        if self.state[role] is not State.OPERATING or self.state[role.peer] is not State.OPERATING:
            return None
        table, caps = (CLIENT_REQUESTS, self.sc) if role is C else (SERVER_REQUESTS, self.cc)
        methods = [m for m, gate, first in table if first <= self.VERSION and not _cap(caps, *gate)]
        if role is C and self.VERSION == "2024-11-05":
            methods = [m for m in methods if m != "completion/complete"]
        if not methods:
            return None
        rid = self._raw_id()
        method = data.draw(st.sampled_from(methods))
        return Illegal(
            "undeclared capability",
            role,
            Request(id=rid, method=method, params=self._params(role, method, data)),
            ExpectInvalid(METHOD_NOT_FOUND, reply=True, reply_id=rid),
            local_code=METHOD_NOT_FOUND,
        )

    def _illegal_wrong_direction(self, data: st.DataObject) -> Illegal | None:
        role = data.draw(st.sampled_from((C, S)))
        if self.state[role] is not State.OPERATING or self.state[role.peer] is not State.OPERATING:
            return None
        rid = self._raw_id()
        if data.draw(st.booleans()):
            table = SERVER_REQUESTS if role is C else CLIENT_REQUESTS
            methods = [
                m for m, _, first in table if first <= self.VERSION and not m.startswith("tasks/")
            ]
            method = data.draw(st.sampled_from(methods))
            return Illegal(
                "request in the wrong direction",
                role,
                Request(id=rid, method=method, params={}),
                ExpectInvalid(METHOD_NOT_FOUND, reply=True, reply_id=rid),
                local_code=METHOD_NOT_FOUND,
            )
        method = (
            data.draw(st.sampled_from([m for m, _ in LIST_CHANGED] + ["notifications/message"]))
            if role is C
            else "notifications/roots/list_changed"
        )
        params = {"level": "error", "data": 1} if method == "notifications/message" else None
        return Illegal(
            "notification in the wrong direction",
            role,
            Notification(method=method, params=params),
            ExpectInvalid(METHOD_NOT_FOUND, reply=False),
            local_code=METHOD_NOT_FOUND,
        )

    def _illegal_second_initialize(self, data: st.DataObject) -> Illegal | None:
        if self.state[C] is not State.OPERATING:
            return None
        rid = self._raw_id()
        params = {
            "protocolVersion": self.VERSION,
            "capabilities": {},
            "clientInfo": {"name": "c", "version": "1"},
        }
        return Illegal(
            "second initialize",
            C,
            Request(id=rid, method="initialize", params=params),
            ExpectInvalid(INVALID_REQUEST, reply=True, reply_id=rid),
        )

    def _illegal_initialized_early(self) -> Illegal | None:
        if self.state[C] is not State.INITIALIZING:
            return None
        return Illegal(
            "notifications/initialized before the result",
            C,
            Notification(method="notifications/initialized"),
            ExpectInvalid(INVALID_REQUEST, reply=False),
        )

    def _illegal_cancel_initialize(self) -> Illegal | None:
        if self.init_id is None or self.state[C] is not State.INITIALIZING:
            return None
        return Illegal(
            "cancel of initialize",
            C,
            Notification(method="notifications/cancelled", params={"requestId": self.init_id}),
            None,
        )

    def _illegal_server_request_early(self, data: st.DataObject) -> Illegal | None:
        if self.state[S] not in (State.INITIALIZING, State.INITIALIZED):
            return None
        methods = self._server_methods()
        if not methods:
            return None
        rid = self._raw_id()
        method = data.draw(st.sampled_from(methods))
        return Illegal(
            "server request before notifications/initialized",
            S,
            Request(id=rid, method=method, params=self._params(S, method, data)),
            ExpectInvalid(INVALID_REQUEST, reply=True, reply_id=rid),
        )

    def _illegal_undeclared_notification(self, data: st.DataObject) -> Illegal | None:
        if self.state[C] is not State.OPERATING or self.state[S] is not State.OPERATING:
            return None
        options: list[tuple[Role, Notification]] = [
            (S, Notification(method=m)) for m, gate in LIST_CHANGED if not _cap(self.sc, *gate)
        ]
        if "logging" not in self.sc:
            options.append(
                (
                    S,
                    Notification(
                        method="notifications/message", params={"level": "error", "data": 1}
                    ),
                )
            )
        if not _cap(self.cc, "roots", "listChanged"):
            options.append((C, Notification(method="notifications/roots/list_changed")))
        if not options:
            return None
        role, event = data.draw(st.sampled_from(options))
        return Illegal(
            "undeclared notification",
            role,
            event,
            ExpectInvalid(METHOD_NOT_FOUND, reply=False),
            local_code=METHOD_NOT_FOUND,
        )

    def _illegal_unsubscribed_update(self) -> Illegal | None:
        if self.state[S] is not State.OPERATING or not _cap(self.sc, "resources", "subscribe"):
            return None
        event = Notification(
            method="notifications/resources/updated", params={"uri": "file:///never"}
        )
        return Illegal(
            "update of an unsubscribed resource",
            S,
            event,
            ExpectInvalid(INVALID_REQUEST, reply=False),
        )

    def _illegal_log_below_level(self) -> Illegal | None:
        if self.server_level in (None, "debug") or self.state[S] is not State.OPERATING:
            return None
        assert self.server_level is not None
        level = LEVELS[LEVELS.index(self.server_level) - 1]
        event = Notification(method="notifications/message", params={"level": level, "data": 1})
        return Illegal(
            "log message below the level", S, event, ExpectInvalid(INVALID_REQUEST, reply=False)
        )

    def _illegal_batch(self, data: st.DataObject) -> Illegal | None:
        if self.state[C] is not State.OPERATING or self.state[S] is not State.OPERATING:
            return None
        rid = self._raw_id()
        if self.VERSION != "2025-03-26":
            event = Batch(events=(Request(id=rid, method="ping"),))
            return Illegal(
                "batch outside 2025-03-26",
                C,
                event,  # type: ignore[arg-type]
                ExpectInvalid(INVALID_REQUEST, reply=True, reply_id=None),
                raw=[_wire(Request(id=rid, method="ping"))],
            )
        params = {
            "protocolVersion": self.VERSION,
            "capabilities": {},
            "clientInfo": {"name": "c", "version": "1"},
        }
        init = Request(id=rid, method="initialize", params=params)
        return Illegal(
            "initialize in a batch",
            C,
            Batch(events=(init,)),  # type: ignore[arg-type]
            ExpectInvalid(INVALID_REQUEST, reply=True, reply_id=rid),
            raw=[_wire(init)],
        )


class Legacy20241105(LegacyMachine):
    VERSION = "2024-11-05"


class Legacy20250326(LegacyMachine):
    VERSION = "2025-03-26"


class Legacy20250618(LegacyMachine):
    VERSION = "2025-06-18"


class Legacy20251125(LegacyMachine):
    VERSION = "2025-11-25"


# --------------------------------------------------------------------------- stateless era

LISTEN_FLAGS: Final = {
    "toolsListChanged": ("notifications/tools/list_changed", ("tools", "listChanged")),
    "promptsListChanged": ("notifications/prompts/list_changed", ("prompts", "listChanged")),
    "resourcesListChanged": ("notifications/resources/list_changed", ("resources", "listChanged")),
}
MODERN_REQUESTS: Final = (
    ("server/discover", ()),
    ("subscriptions/listen", ()),
    ("resources/list", ("resources",)),
    ("resources/templates/list", ("resources",)),
    ("resources/read", ("resources",)),
    ("prompts/list", ("prompts",)),
    ("prompts/get", ("prompts",)),
    ("tools/list", ("tools",)),
    ("tools/call", ("tools",)),
    ("completion/complete", ("completions",)),
)
INPUT_REQUIRED_METHODS: Final = ("tools/call", "prompts/get", "resources/read")

modern_server_caps: st.SearchStrategy[dict[str, Any]] = _full_or_random(
    {
        "tools": {"listChanged": True},
        "prompts": {"listChanged": True},
        "resources": {"subscribe": True, "listChanged": True},
        "logging": {},
        "completions": {},
    },
    {
        "tools": _flags("listChanged"),
        "prompts": _flags("listChanged"),
        "resources": _flags("subscribe", "listChanged"),
        "logging": st.just({}),
        "completions": st.just({}),
    },
)
modern_client_caps: st.SearchStrategy[dict[str, Any]] = st.fixed_dictionaries(
    {},
    optional={
        "roots": st.just({}),
        "sampling": _flags("tools", "context"),
        "elicitation": _flags("form", "url"),
    },
)


class StatelessMachine(PairMachine):
    """The 2026-07-28 stateless era."""

    ERA = Era.STATELESS

    @initialize(data=st.data())
    def setup(self, data: st.DataObject) -> None:
        self.version = MODERN
        self.cc = data.draw(modern_client_caps, label="client capabilities")
        self.sc = data.draw(modern_server_caps, label="server capabilities")
        self.client_all = data.draw(st.booleans(), label="client speaks all versions")
        self.server_all = server_all = data.draw(st.booleans(), label="server speaks all versions")
        self.conn = {
            C: Connection(
                C,
                versions=ALL if self.client_all else (MODERN,),
                capabilities=self.cc,
                implementation={"name": "c", "version": "1"},
                strict=True,
            ),
            S: Connection(
                S,
                versions=ALL if server_all else (MODERN,),
                capabilities=self.sc,
                implementation={"name": "s", "version": "1"},
                strict=True,
            ),
        }
        self.probe: RequestId | None = None
        self.knows_sc = False  # whether the client learned the server's capabilities
        self.input_required: list[InputRequired] = []
        self.ready = True
        if self.client_all and data.draw(st.booleans(), label="start with the probe done"):
            self.probe_first(data)
            self._flush()
            [pending] = self.owed[S].values()
            self._answer(S, pending, data)
            self._flush()

    def _may_notify(self, role: Role) -> bool:
        return self.state[C] is not State.PROBING

    def _progress_senders(self) -> list[Role]:
        return [S]

    def _can_answer(self, role: Role, pending: Pending) -> bool:
        return role is S

    # ------------------------------------------------------------------ arrivals

    def _arrival_request(self, receiver: Role, event: Request) -> list[Expected]:
        self.state[S] = State.STATELESS
        return super()._arrival_request(receiver, event)

    def _arrival_notification(self, receiver: Role, event: Notification) -> list[Expected]:
        params = event.params or {}
        method = event.method
        if receiver is C and method == "notifications/cancelled":
            rid = params["requestId"]
            listen = self.out[C].get(rid)
            if listen is None:
                return []  # the client cancelled the listen first: ignored
            del self.out[C][rid]
            self._ledger_close(C, rid, "ended")
            return [event]
        if receiver is C and method == "notifications/message":
            rank = LEVELS.index(params["level"])
            levels = [LEVELS.index(p.log_level) for p in self.out[C].values() if p.log_level]
            if not levels or rank < min(levels):
                return [
                    Tolerated("log message for a request we cancelled while it was on the wire")
                ]
            return [event]
        if receiver is C and method != "notifications/progress":
            sid = params["_meta"][META_SUBSCRIPTION]
            listen = self.out[C].get(sid)
            if listen is None or listen.method != "subscriptions/listen":
                return [
                    Tolerated(
                        "stream notification for a listen we cancelled while it was on the wire"
                    )
                ]
            return [event]
        return super()._arrival_notification(receiver, event)

    def _answered(self, requester: Role, pending: Pending, event: Message) -> list[Expected]:
        if pending.method == "server/discover" and pending.id == self.probe:
            self.probe = None
            assert isinstance(event, Response)
            self.state[C] = State.STATELESS
            self.knows_sc = True
            return [event]
        if pending.method == "server/discover" and isinstance(event, Response):
            self.knows_sc = True  # any discover result tells the client the capabilities
        if isinstance(event, Response) and event.result.get("resultType") == "input_required":
            got = InputRequired(
                id=pending.id,
                result=event.result,
                request=Request(id=pending.id, method=pending.method, params=pending.params),
            )
            self.input_required.append(got)
            return [got]
        return [event]

    # ------------------------------------------------------------------ client rules

    @precondition(lambda self: self.ready and self.client_all and self.state[C] is State.IDLE)
    @rule(data=st.data())
    def probe_first(self, data: st.DataObject) -> None:
        """A dual-era client probes with server/discover; the answer decides the era."""
        rid = self._fresh_id(C, data)
        request = Request(id=rid, method="server/discover")
        self._request(
            C, request, Pending(rid, "server/discover", self._fill_meta(None), C, caps=self.cc)
        )
        self.probe = rid
        self.state[C] = State.PROBING

    def _client_methods(self) -> list[str]:
        return [m for m, gate in MODERN_REQUESTS if _cap(self.sc, *gate)]

    @precondition(
        lambda self: (
            self.ready
            and (
                self.state[C] is State.STATELESS
                or (not self.client_all and self.state[C] is State.IDLE)
            )
        )
    )
    @rule(data=st.data())
    def client_request(self, data: st.DataObject) -> None:
        gated = [
            m
            for m in self._client_methods()
            if m not in ("server/discover", "subscriptions/listen")
        ]
        method = data.draw(
            st.sampled_from([*gated, *gated, "server/discover", *["subscriptions/listen"] * 4])
        )
        rid = self._fresh_id(C, data)
        params: dict[str, Any] | None
        if method == "resources/read":
            params = {"uri": data.draw(st.sampled_from(URIS))}
        elif method in ("tools/call", "prompts/get"):
            params = {"name": "t", "arguments": {"x": 1}}
        elif method == "completion/complete":
            params = {
                "ref": {"type": "ref/prompt", "name": "p"},
                "argument": {"name": "a", "value": "v"},
            }
        elif method == "subscriptions/listen":
            wanted: dict[str, Any] = {
                f: data.draw(st.integers(0, 3)) > 0
                for f in LISTEN_FLAGS
                if data.draw(st.integers(0, 3)) > 0
            }
            if data.draw(st.booleans()):
                wanted["resourceSubscriptions"] = data.draw(
                    st.lists(st.sampled_from(URIS), max_size=2, unique=True)
                )
            params = {"notifications": wanted}
        else:
            params = data.draw(st.sampled_from((None, {}, {"cursor": "c"})))
        meta: dict[str, Any] = {}
        if method != "subscriptions/listen" and data.draw(st.integers(0, 2)) == 0:
            meta["progressToken"] = self._token(data)
        if method != "subscriptions/listen" and data.draw(st.integers(0, 2)) == 0:
            meta[META_LOG_LEVEL] = data.draw(st.sampled_from(LEVELS))
        caps = self.cc
        if data.draw(st.integers(0, 3)) == 0:
            caps = data.draw(modern_client_caps)
            meta[META_CAPABILITIES] = caps
        if meta:
            params = {**(params or {}), "_meta": meta}
        filled = self._fill_meta(params)
        pending = Pending(
            rid,
            method,
            filled,
            C,
            token=meta.get("progressToken"),
            log_level=meta.get(META_LOG_LEVEL),
            caps=caps,
        )
        self._request(C, Request(id=rid, method=method, params=params), pending)
        self.state[C] = State.STATELESS

    @precondition(
        lambda self: self.ready and bool(self.input_required) and self.state[C] is State.STATELESS
    )
    @rule(data=st.data())
    def retry(self, data: st.DataObject) -> None:
        """Answer an input_required result: the retry has a new id, the same params, the
        answers under the server's keys and requestState echoed exactly."""
        event = self.input_required.pop(data.draw(st.integers(0, len(self.input_required) - 1)))
        answers = {key: {"action": "accept", "content": {"v": key}} for key in event.input_requests}
        rid = self._fresh_id(C, data)
        retry = self.conn[C].retry_request(event, answers, id=rid)
        assert retry.id == rid
        assert retry.method == event.request.method
        original = dict(event.request.params or {})
        assert retry.params.get("requestState") == event.request_state
        if answers:
            assert retry.params.get("inputResponses") == answers
        for key in set(original) - {"inputResponses", "requestState"}:
            assert json_equal(retry.params[key], original[key]), key
        pending = Pending(
            rid,
            retry.method,
            retry.params,
            C,
            token=(retry.params.get("_meta") or {}).get("progressToken"),
            log_level=(retry.params.get("_meta") or {}).get(META_LOG_LEVEL),
            caps=(retry.params.get("_meta") or {}).get(META_CAPABILITIES, self.cc),
        )
        self._request(C, retry, pending)

    def _cancellable(self, role: Role) -> list[Pending]:
        # Listens are cancelled by their own rule (they live long: cancelled as often as
        # the rest, few would ever be acknowledged).
        if role is S:
            return []
        return [p for p in super()._cancellable(role) if p.method != "subscriptions/listen"]

    @precondition(
        lambda self: (
            self.ready
            and self.state[C] is State.STATELESS
            and any(p.method == "subscriptions/listen" for p in self.out[C].values())
        )
    )
    @rule(data=st.data())
    def cancel_listen(self, data: st.DataObject) -> None:
        """A stdio client ends a listen stream with notifications/cancelled."""
        listens = [p for p in self.out[C].values() if p.method == "subscriptions/listen"]
        self._cancel(C, data.draw(st.sampled_from(listens)), data)

    # ------------------------------------------------------------------ server rules

    def _answer(self, role: Role, pending: Pending, data: st.DataObject) -> None:
        assert role is S
        event: Message
        if pending.method == "subscriptions/listen" and pending.acked and data.draw(st.booleans()):
            event = Response(
                id=pending.id,
                result={"resultType": "complete", "_meta": {META_SUBSCRIPTION: pending.id}},
            )
        elif pending.method == "subscriptions/listen" and pending.acked:
            return  # a stream stays open until ended (end_listen) or answered
        elif pending.method == "subscriptions/listen" and data.draw(st.integers(0, 3)) > 0:
            self._acknowledge(pending, data)
            return
        elif pending.method == "subscriptions/listen" or (
            pending.id != self.probe and data.draw(st.integers(0, 4)) == 0
        ):
            # (An error to the probe would send a dual-era client to the initialize era.)
            event = ErrorResponse(id=pending.id, code=data.draw(error_codes), message="no")
        elif pending.method == "server/discover":
            event = Response(
                id=pending.id,
                result=self.conn[S].discover_result(ttl_ms=data.draw(st.sampled_from((0, 60_000)))),
            )
        elif pending.method in INPUT_REQUIRED_METHODS and data.draw(st.booleans()):
            event = Response(id=pending.id, result=self._input_required(pending, data))
        else:
            result = data.draw(results)
            if data.draw(st.booleans()):
                result["resultType"] = "complete"
            if pending.method in (
                "tools/list",
                "prompts/list",
                "resources/list",
                "resources/templates/list",
                "resources/read",
            ):
                result.update(ttlMs=0, cacheScope="private")
            event = Response(id=pending.id, result=result)
        self._send(S, event)
        self._answer_sent(S, pending.id)

    def _input_required(self, pending: Pending, data: st.DataObject) -> dict[str, Any]:
        caps = pending.caps
        asks: dict[str, Any] = {}
        if "elicitation" in caps:
            elicitation = caps["elicitation"] if isinstance(caps["elicitation"], Mapping) else {}
            if not elicitation or "form" in elicitation:
                asks["name"] = {
                    "method": "elicitation/create",
                    "params": {
                        "mode": "form",
                        "message": "name?",
                        "requestedSchema": {"type": "object", "properties": {}},
                    },
                }
            elif "url" in elicitation:
                asks["login"] = {
                    "method": "elicitation/create",
                    "params": {"mode": "url", "message": "log in", "url": "https://x.example"},
                }
        if "sampling" in caps:
            asks["llm"] = {
                "method": "sampling/createMessage",
                "params": {"messages": [], "maxTokens": 5},
            }
        if "roots" in caps:
            asks["roots"] = {"method": "roots/list"}
        chosen = data.draw(st.lists(st.sampled_from(sorted(asks)), unique=True)) if asks else []
        result: dict[str, Any] = {"resultType": "input_required"}
        if chosen:
            result["inputRequests"] = {k: asks[k] for k in chosen}
        if not chosen or data.draw(st.booleans()):
            result["requestState"] = data.draw(st.sampled_from(("opaque-1", "ZXlK+/=", "")))
        return result

    @precondition(
        lambda self: (
            self.ready
            and any(
                p.method == "subscriptions/listen" and not p.acked for p in self.owed[S].values()
            )
        )
    )
    @rule(data=st.data())
    def acknowledge(self, data: st.DataObject) -> None:
        pending = data.draw(
            st.sampled_from(
                [
                    p
                    for p in self.owed[S].values()
                    if p.method == "subscriptions/listen" and not p.acked
                ]
            )
        )
        self._acknowledge(pending, data)

    def _acknowledge(self, pending: Pending, data: st.DataObject) -> None:
        wanted = pending.params.get("notifications") or {}
        granted_flags: dict[str, Any] = {}
        granted: set[str] = set()
        for flag, (method, gate) in LISTEN_FLAGS.items():
            if wanted.get(flag) and _cap(self.sc, *gate) and data.draw(st.integers(0, 3)) > 0:
                granted_flags[flag] = True
                granted.add(method)
        if "resourceSubscriptions" in wanted and _cap(self.sc, "resources", "subscribe"):
            uris = (
                data.draw(st.lists(st.sampled_from(wanted["resourceSubscriptions"]), unique=True))
                if wanted["resourceSubscriptions"]
                else []
            )
            granted_flags["resourceSubscriptions"] = uris
            granted.update(uris)
        params = {"notifications": granted_flags, "_meta": {META_SUBSCRIPTION: pending.id}}
        self._send(
            S, Notification(method="notifications/subscriptions/acknowledged", params=params)
        )
        pending.acked = True
        pending.granted = frozenset(granted)

    @precondition(
        lambda self: self.ready and any(p.acked and p.granted for p in self.owed[S].values())
    )
    @rule(data=st.data())
    def stream_notification(self, data: st.DataObject) -> None:
        pending = data.draw(
            st.sampled_from([p for p in self.owed[S].values() if p.acked and p.granted])
        )
        what = data.draw(st.sampled_from(sorted(pending.granted)))
        meta = {META_SUBSCRIPTION: pending.id}
        if what.startswith("notifications/"):
            event = Notification(method=what, params={"_meta": meta})
        else:
            event = Notification(
                method="notifications/resources/updated", params={"uri": what, "_meta": meta}
            )
        self._send(S, event)

    @precondition(
        lambda self: (
            self.ready
            and any(p.method == "subscriptions/listen" and p.acked for p in self.owed[S].values())
        )
    )
    @rule(data=st.data())
    def end_listen(self, data: st.DataObject) -> None:
        """A stdio server tears a stream down with notifications/cancelled."""
        pending = data.draw(
            st.sampled_from(
                [p for p in self.owed[S].values() if p.method == "subscriptions/listen" and p.acked]
            )
        )
        self._send(
            S, Notification(method="notifications/cancelled", params={"requestId": pending.id})
        )
        del self.owed[S][pending.id]

    @precondition(
        lambda self: (
            self.ready and "logging" in self.sc and any(p.log_level for p in self.owed[S].values())
        )
    )
    @rule(data=st.data())
    def server_logs(self, data: st.DataObject) -> None:
        floor = min(LEVELS.index(p.log_level) for p in self.owed[S].values() if p.log_level)
        level = data.draw(st.sampled_from(LEVELS[floor:]))
        self._send(
            S, Notification(method="notifications/message", params={"level": level, "data": "x"})
        )

    # ------------------------------------------------------------------ illegal actions

    def _illegal_cases(self, data: st.DataObject) -> list[Callable[[], Illegal | None]]:
        return [
            *super()._illegal_cases(data),
            lambda: self._illegal_server_request(data),
            lambda: self._illegal_client_notification(data),
            lambda: self._illegal_reused_in_flight(data),
            lambda: self._illegal_input_required(data),
            lambda: self._illegal_result_type(data),
            lambda: self._illegal_message_without_level(),
            lambda: self._illegal_stream_without_listen(data),
            lambda: self._illegal_stream_before_ack(),
            lambda: self._illegal_ack_twice(),
            lambda: self._illegal_not_opted_in(data),
            lambda: self._illegal_meta_version(data),
            lambda: self._illegal_undeclared_server_capability(data),
            lambda: self._illegal_initialize(),
            lambda: self._illegal_server_cancel(data),
        ]

    def _client_ready(self) -> bool:
        return self.state[C] is State.STATELESS or (
            not self.client_all and self.state[C] is State.IDLE
        )

    def _illegal_server_request(self, data: st.DataObject) -> Illegal | None:
        if self.state[C] is not State.STATELESS:
            return None
        rid = self._raw_id()
        method = data.draw(
            st.sampled_from(("ping", "sampling/createMessage", "roots/list", "elicitation/create"))
        )
        params: dict[str, Any] | None = None if method == "ping" else {}
        return Illegal(
            "a request from a stateless server",
            S,
            Request(id=rid, method=method, params=params),
            ExpectInvalid(
                METHOD_NOT_FOUND,
                reply=True,
                reply_id=rid,
                known_bug=(
                    lambda e: isinstance(e, InvalidMessage) and e.code == INVALID_PARAMS,
                    "test_bug_stateless_client_checks_server_requests",
                ),
            ),
        )

    def _illegal_client_notification(self, data: st.DataObject) -> Illegal | None:
        if not self._client_ready() or self.state[S] is not State.STATELESS:
            return None
        method = data.draw(
            st.sampled_from(
                (
                    "notifications/initialized",
                    "notifications/roots/list_changed",
                    "notifications/progress",
                )
            )
        )
        params = {"progressToken": 1, "progress": 1} if method == "notifications/progress" else None
        # notifications/initialized exists in the initialize era: "not now" (-32600) is a
        # fair answer too.
        codes = (
            (METHOD_NOT_FOUND, INVALID_REQUEST)
            if method == "notifications/initialized"
            else METHOD_NOT_FOUND
        )
        return Illegal(
            "a client notification other than cancelled",
            C,
            Notification(method=method, params=params),
            ExpectInvalid(codes, reply=False),
        )

    def _illegal_reused_in_flight(self, data: st.DataObject) -> Illegal | None:
        if not self.out[C] or not self._client_ready():
            return None
        pending = data.draw(st.sampled_from(list(self.out[C].values())))
        request = Request(
            id=pending.id, method="tools/list" if "tools" in self.sc else "server/discover"
        )
        return Illegal(
            "id of a request in flight",
            C,
            request,
            ExpectInvalid(INVALID_REQUEST, reply=True, reply_id=None),
            raw=_wire(Request(id=request.id, method=request.method, params=self._fill_meta(None))),
        )

    def _retire_after_invalid(self, pending: Pending) -> Callable[[list[Event]], None]:
        """A malformed answer ends the client's request; the server answers it for real
        (the bytes are dropped, as the client has given up on it)."""

        def after(got: list[Event]) -> None:
            del self.out[C][pending.id]
            self._ledger_close(C, pending.id, "answered")
            assert self.conn[S].send(ErrorResponse(id=pending.id, code=-32603, message="x"))
            self._answer_sent(S, pending.id)

        return after

    def _illegal_input_required(self, data: st.DataObject) -> Illegal | None:
        options = [
            p
            for p in self.owed[S].values()
            if p.method != "subscriptions/listen" and p.id != self.probe
        ]
        if not options:
            return None
        pending = data.draw(st.sampled_from(options))
        if pending.method not in INPUT_REQUIRED_METHODS:
            result: dict[str, Any] = {"resultType": "input_required", "requestState": "s"}
            name = f"input_required answering {pending.method}"
            code: int | None = None
        elif data.draw(st.booleans()) or not (
            {"elicitation", "sampling", "roots"} - set(pending.caps)
        ):
            result = {"resultType": "input_required"}
            name = "input_required without inputRequests or requestState"
            code = None
        else:
            missing = sorted({"elicitation", "sampling", "roots"} - set(pending.caps))
            ask = data.draw(st.sampled_from(missing))
            method = {
                "elicitation": "elicitation/create",
                "sampling": "sampling/createMessage",
                "roots": "roots/list",
            }[ask]
            result = {
                "resultType": "input_required",
                "inputRequests": {
                    "k": {"method": method, "params": {"message": "m", "messages": []}}
                },
            }
            name = "input_required for an undeclared client capability"
            code = -32021
        return Illegal(
            name,
            S,
            Response(id=pending.id, result=result),
            ExpectInvalid((INVALID_REQUEST, -32021) if code else INVALID_REQUEST, reply=False),
            after=self._retire_after_invalid(pending),
            local_code=code,
        )

    def _illegal_result_type(self, data: st.DataObject) -> Illegal | None:
        options = [
            p
            for p in self.owed[S].values()
            if p.method != "subscriptions/listen" and p.id != self.probe
        ]
        if not options:
            return None
        pending = data.draw(st.sampled_from(options))
        bad = data.draw(st.sampled_from(("task", "bogus", "")))
        return Illegal(
            "unknown resultType",
            S,
            Response(id=pending.id, result={"resultType": bad}),
            ExpectInvalid(INVALID_REQUEST, reply=False),
            after=self._retire_after_invalid(pending),
        )

    def _illegal_message_without_level(self) -> Illegal | None:
        if (
            any(p.log_level for p in self.owed[S].values())
            or self.state[S] is not State.STATELESS
            or self.state[C] is not State.STATELESS
        ):
            return None
        # Without logging, a client that knows the server's capabilities says -32601; one
        # that does not (it never probed) can only see that no request asked for logs.
        code = METHOD_NOT_FOUND if "logging" not in self.sc and self.knows_sc else INVALID_REQUEST
        return Illegal(
            "log message without a request that set logLevel",
            S,
            Notification(method="notifications/message", params={"level": "emergency", "data": 1}),
            ExpectInvalid(code, reply=False),
        )

    def _illegal_stream_without_listen(self, data: st.DataObject) -> Illegal | None:
        if self.state[C] is not State.STATELESS:
            return None
        options = [m for _, (m, gate) in LISTEN_FLAGS.items() if _cap(self.sc, *gate)]
        if not options:
            return None
        method = data.draw(st.sampled_from(options))
        return Illegal(
            "stream notification outside a listen",
            S,
            Notification(method=method),
            ExpectInvalid(INVALID_REQUEST, reply=False),
        )

    def _illegal_stream_before_ack(self) -> Illegal | None:
        for p in self.owed[S].values():
            if p.method == "subscriptions/listen" and not p.acked:
                for _, (method, gate) in LISTEN_FLAGS.items():
                    if _cap(self.sc, *gate):
                        event = Notification(
                            method=method, params={"_meta": {META_SUBSCRIPTION: p.id}}
                        )
                        return Illegal(
                            "stream notification before the acknowledgement",
                            S,
                            event,
                            ExpectInvalid(INVALID_REQUEST, reply=False),
                        )
        return None

    def _illegal_ack_twice(self) -> Illegal | None:
        for p in self.owed[S].values():
            if p.acked:
                params = {"notifications": {}, "_meta": {META_SUBSCRIPTION: p.id}}
                event = Notification(
                    method="notifications/subscriptions/acknowledged", params=params
                )
                return Illegal(
                    "second acknowledgement", S, event, ExpectInvalid(INVALID_REQUEST, reply=False)
                )
        return None

    def _illegal_not_opted_in(self, data: st.DataObject) -> Illegal | None:
        for p in self.owed[S].values():
            if p.acked:
                for _, (method, gate) in LISTEN_FLAGS.items():
                    if method not in p.granted and _cap(self.sc, *gate):
                        event = Notification(
                            method=method, params={"_meta": {META_SUBSCRIPTION: p.id}}
                        )
                        return Illegal(
                            "stream notification not opted into",
                            S,
                            event,
                            ExpectInvalid(INVALID_REQUEST, reply=False),
                        )
                if "file:///never" not in p.granted and _cap(self.sc, "resources", "subscribe"):
                    event = Notification(
                        method="notifications/resources/updated",
                        params={"uri": "file:///never", "_meta": {META_SUBSCRIPTION: p.id}},
                    )
                    return Illegal(
                        "update of a resource not on the stream",
                        S,
                        event,
                        ExpectInvalid(INVALID_REQUEST, reply=False),
                    )
        return None

    def _illegal_meta_version(self, data: st.DataObject) -> Illegal | None:
        if not self._client_ready() or self.state[C] is State.IDLE:
            return None
        rid = self._raw_id()
        version = data.draw(st.sampled_from(("2025-06-18", "2024-11-05", "2099-01-01")))
        params = {"_meta": {META_VERSION: version}}
        return Illegal(
            "_meta protocolVersion other than the session's",
            C,
            Request(id=rid, method="server/discover", params=params),
            ExpectInvalid(-32022, reply=True, reply_id=rid),
            raw=_wire(Request(id=rid, method="server/discover", params=self._fill_meta(params))),
        )

    def _illegal_undeclared_server_capability(self, data: st.DataObject) -> Illegal | None:
        if not self.knows_sc or self.state[C] is not State.STATELESS:
            return None
        methods = [m for m, gate in MODERN_REQUESTS if not _cap(self.sc, *gate)]
        if not methods:
            return None
        rid = self._raw_id()
        method = data.draw(st.sampled_from(methods))
        params = {"uri": "file:///a"} if method == "resources/read" else {"name": "t"}
        return Illegal(
            "request for an undeclared server capability",
            C,
            Request(id=rid, method=method, params=params),
            ExpectInvalid(METHOD_NOT_FOUND, reply=True, reply_id=rid),
            raw=_wire(Request(id=rid, method=method, params=self._fill_meta(params))),
            local_code=METHOD_NOT_FOUND,
        )

    def _illegal_initialize(self) -> Illegal | None:
        # (A dual-era server that has not seen a stateless request yet takes initialize.)
        if (
            self.client_all
            or not self._client_ready()
            or (self.state[S] is State.IDLE and self.server_all)
        ):
            return None
        rid = self._raw_id()
        params = {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "c", "version": "1"},
        }
        return Illegal(
            "initialize in the stateless era",
            C,
            Request(id=rid, method="initialize", params=params),
            ExpectInvalid((INVALID_PARAMS, -32022, METHOD_NOT_FOUND), reply=True, reply_id=rid),
        )

    def _illegal_server_cancel(self, data: st.DataObject) -> Illegal | None:
        options = [
            p
            for p in self.owed[S].values()
            if p.method != "subscriptions/listen" and p.id != self.probe
        ]
        if not options:
            return None
        pending = data.draw(st.sampled_from(options))
        event = Notification(method="notifications/cancelled", params={"requestId": pending.id})
        return Illegal("a server cancel of a request other than a listen", S, event, None)


# --------------------------------------------------------------------------- the tests

_LEGACY_SETTINGS: Final = _profile_settings(divisor=8, steps=40)
_STATELESS_SETTINGS: Final = _profile_settings(divisor=4, steps=50)

TestLegacy20241105 = Legacy20241105.TestCase
TestLegacy20241105.settings = _LEGACY_SETTINGS
TestLegacy20250326 = Legacy20250326.TestCase
TestLegacy20250326.settings = _LEGACY_SETTINGS
TestLegacy20250618 = Legacy20250618.TestCase
TestLegacy20250618.settings = _LEGACY_SETTINGS
TestLegacy20251125 = Legacy20251125.TestCase
TestLegacy20251125.settings = _LEGACY_SETTINGS
TestStateless = StatelessMachine.TestCase
TestStateless.settings = _STATELESS_SETTINGS
