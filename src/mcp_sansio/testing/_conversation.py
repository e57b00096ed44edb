"""One conversation with one fresh peer, judged by our own Connection.

:class:`Conversation` speaks to a peer (a :class:`~mcp_sansio.testing.Channel`) through a
*mirror* :class:`~mcp_sansio.Connection` in the other role: every legal message we send
and every message the peer sends goes through it, so any
:class:`~mcp_sansio.InvalidMessage` or :class:`~mcp_sansio.RemoteProtocolError` it raises
about the peer's messages is a violation by the peer, named after the rule it breaks (see
:func:`~mcp_sansio.testing.classify`). Near-miss messages go out raw, past the mirror, as
a :class:`~mcp_sansio.testing.Shot`; :meth:`Conversation.shoot` checks the answer the
rule demands, and that the peer still answers afterwards.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Final

import orjson

from mcp_sansio._connection import META_CAPABILITIES, META_CLIENT_INFO, META_VERSION, Connection
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
from mcp_sansio._versions import ALL_VERSIONS, VERSIONS
from mcp_sansio.testing._targets import MAX_LINE, Channel, Incoming, Target
from mcp_sansio.testing._wire import (
    DEFAULT_STARTUP,
    DEFAULT_TIMEOUT,
    FIRST_WAIT,
    GRACE,
    KEPT_BYTES,
    MAX_EXCHANGE,
    MAX_UNREADABLE,
    PROBE_INFO,
    PROBE_SERVER_CAPABILITIES,
    Shot,
    Violation,
    WireLine,
    classify,
    describe,
    dumps,
    headerless,
    id_key,
    ids_in,
    judge,
    notification_method,
    sampled_message,
)

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
        self.policy = spec.policy
        """The era's policy (the version record's ``policy``: what differs by era)."""
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
        if peer is Role.CLIENT and not self.policy.handshake:
            raise ValueError("a client is probed in the initialize era only")
        if not self.policy.handshake:  # no negotiation: one version
            versions: tuple[str, ...] = (version,)
        else:
            legacy = [
                v for v in (legacy_versions or ALL_VERSIONS) if VERSIONS[v].policy is self.policy
            ]
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
        self._methods[id_key(rid)] = method
        self._answers[id_key(rid)] = []
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
        if self.policy.http_cancel_closes_stream and self.channel.abort(rid):
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
        key = id_key(rid)
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
        return list(self._answers.get(id_key(rid), ()))

    def answered_ids(self) -> list[tuple[str, Any]]:
        """The requests of ours that have been answered, oldest first, as ``(type name,
        id)`` keys (``1`` and ``"1"`` apart)."""
        return [key for key, answers in self._answers.items() if answers]

    def send_raw(self, data: bytes, ids: Iterable[RequestId] = ()) -> int:
        """Send ``data`` as it is, past the mirror; answers under ``ids`` are collected for
        :meth:`raw_answers` instead of going to the mirror. Returns a mark for
        :meth:`raw_answers`."""
        for rid in ids:
            self._raw.setdefault(id_key(rid), [])
        self.used_ids.update(id_key(rid) for rid in ids_in(data))
        mark = self._received
        self._write(data)
        return mark

    def raw_answers(self, mark: int, ids: Iterable[RequestId]) -> list[Mapping[str, Any]]:
        """The answers collected under ``ids``, and every ``"id": null`` error and
        transport failure that arrived after ``mark``."""
        found: list[tuple[int, Mapping[str, Any]]] = []
        for rid in ids:
            found.extend(self._raw.get(id_key(rid), ()))
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
            if self._raw.pop(id_key(rid), None) == []:
                self._late.add(id_key(rid))

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
        if not self.policy.handshake:
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
            META_VERSION: self.version,
            META_CAPABILITIES: dict(self.capabilities),
            META_CLIENT_INFO: dict(PROBE_INFO),
        }
        names = {"version": META_VERSION, "capabilities": META_CAPABILITIES}
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
        method = "ping" if self.policy.handshake else "server/discover"
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
        carried = ids_in(shot.data)
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
        self.last_answer = "; ".join(describe(m) for m in got) or "no answer"
        header_level = self.transport == "http" and self.policy.standard_headers
        problem = judge(expect, got, self.transport, header_level and headerless(shot.data))
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
            rid = ids_in(item.failed)
            key = id_key(rid[0]) if rid else None
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
                    self._feed(dumps(member))
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
        key = id_key(message["id"])
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
                    self._answers.setdefault(id_key(rid), []).append(event)
            elif cls is Notification:
                self.notifications.append(event)  # type: ignore[arg-type]
                if event.method == "notifications/initialized":  # type: ignore[attr-defined]
                    self._initialized = True
            elif cls is Request:
                self._answer_peer(event)  # type: ignore[arg-type]
            elif cls is InvalidMessage:
                assert isinstance(event, InvalidMessage)
                method = notification_method(event.raw)
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
            self._write(dumps({"jsonrpc": "2.0", "id": request.id, "result": result}) + b"\n")
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
