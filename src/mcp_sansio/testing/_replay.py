"""Scripted near-misses played live.

:func:`replay` plays a scripted near-miss of :func:`mcp_sansio.testing.near_misses` (a
whole exchange from a fresh connection) against a fresh peer; :func:`agrees` says whether
our own Connection, configured like the live server (its versions, its capabilities),
finds that the script breaks its rule the way the rule says, since the scripts assume a
server of their own making. (No rule has two builders to reconcile: the machine replays
only the scripts of rules no single message breaks; the others' faults it fires live.)
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import attrs
import orjson

from mcp_sansio._connection import META_CAPABILITIES, META_CLIENT_INFO, META_VERSION
from mcp_sansio._errors import ErrorCode
from mcp_sansio._events import (
    InvalidMessage,
    Request,
)
from mcp_sansio._versions import VERSIONS
from mcp_sansio.testing._targets import Target
from mcp_sansio.testing._wire import (
    DEFAULT_STARTUP,
    DEFAULT_TIMEOUT,
    FIRST_WAIT,
    GRACE,
    PROBE_INFO,
    WireLine,
    dumps,
    headerless,
    method_of,
)

# ---------------------------------------------------------------------- scripted near-misses


def agrees(nm: Any, capabilities: Mapping[str, Any], versions: Sequence[str] | None = None) -> bool:
    """Whether our own :class:`~mcp_sansio.Connection`, as a server of ``versions``
    (default: ``nm``'s version only) with ``capabilities`` (the live server's), finds
    that ``nm`` (a :class:`~mcp_sansio.testing.NearMiss`) breaks its rule the way the
    rule says: the scripts assume a server of one version with the capabilities they
    declare, and against a live server that has others they may mean something else."""
    live = dict(capabilities)
    exchange = []
    for line in nm.exchange:
        # The script's initialize result declares the script's capabilities: the live
        # server's are what count.
        value = orjson.loads(line.data) if line.sender is not nm.sender else None
        if not isinstance(value, dict):
            exchange.append(line)
            continue
        result = value.get("result")
        if isinstance(result, dict) and "protocolVersion" in result and "capabilities" in result:
            data = dumps({**value, "result": {**result, "capabilities": live}}) + b"\n"
            line = attrs.evolve(line, data=data)
        exchange.append(line)
    try:
        script = attrs.evolve(nm, exchange=tuple(exchange))
        config: dict[str, Any] = {"capabilities": live}
        if versions:
            config["versions"] = tuple(versions)
        events = script.play(script.connection(**config))
    except Exception:  # a script our Connection refuses with these capabilities
        return False
    replies = [e for e in events if isinstance(e, InvalidMessage) and e.reply is not None]
    accepted = [e for e in events if isinstance(e, Request)]
    reply = nm.expect.reply
    if reply == "error":
        code = nm.expect.code
        return len(replies) == 1 and not accepted and (code is None or replies[0].code == code)
    if reply == "none":
        return not replies and not accepted
    if reply == "result":
        return len(accepted) == 1 and not replies
    return False


def replay(
    target: Target,
    nm: Any,
    *,
    timeout: float = DEFAULT_TIMEOUT,
    startup: float = DEFAULT_STARTUP,
) -> tuple[str | None, tuple[WireLine, ...]]:
    """Play a :class:`~mcp_sansio.testing.NearMiss` (client side) against a fresh peer of
    ``target``: the client's lines of its exchange (each request waited for), then its
    message, then a ``ping`` / ``server/discover`` to make sure the peer has read it.
    Returns what is wrong with the peer's replies (``nm.expect.check``), or ``None``, and
    the exchange. A setup the peer does not answer is not judged (``None``)."""
    http = target.transport == "http"
    if http and nm.rule == "ids.duplicate-request-id" and not VERSIONS[nm.version].policy.handshake:
        # Over HTTP each request has its own stream: an answer cannot be mistaken for
        # another request's, which is what the rule is for.
        return None, ()
    if http and VERSIONS[nm.version].policy.handshake:
        first = next((line for line in nm.exchange if line.sender is nm.sender), None)
        if first is None or method_of(first.data) != "initialize":
            # Before initialize, an HTTP request carries nothing that names its era: a
            # server of both eras may take it for 2026-07-28 (the checks allow for that).
            return None, ()
    channel = target.open()
    lines: list[WireLine] = []
    values: list[Any] = []
    started = False

    def send(data: bytes) -> None:
        lines.append(WireLine("probe", data.rstrip(b"\n")))
        channel.send(data)

    def is_answer(v: Any) -> bool:
        return isinstance(v, dict) and "method" not in v and ("result" in v or "error" in v)

    def answered(rid: Any, since: int) -> bool:
        return any(
            is_answer(v) and type(v.get("id")) is type(rid) and v.get("id") == rid
            for v in values[since:]
        )

    def acked(rid: Any, since: int) -> bool:
        """A listen's acknowledgement (or its answer) arrived."""
        for v in values[since:]:
            params = v.get("params") if isinstance(v, dict) else None
            meta = params.get("_meta") if isinstance(params, dict) else None
            if (
                isinstance(meta, dict)
                and v.get("method") == "notifications/subscriptions/acknowledged"
                and meta.get("io.modelcontextprotocol/subscriptionId") == rid
            ):
                return True
        return answered(rid, since)

    def pump(done: Callable[[], bool], limit: float) -> bool:
        nonlocal started
        if not started:
            limit = max(limit, startup)
            started = True
        deadline = time.monotonic() + limit
        while not done():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            item = channel.receive(min(remaining, 0.5))
            if item is None:
                if channel.closed:
                    return done()
                continue
            if not item.data:
                lines.append(WireLine("note", item.note.encode()))
                if item.overflow:
                    return False
                continue
            lines.append(WireLine("peer", item.data))
            try:
                value = orjson.loads(item.data)
            except orjson.JSONDecodeError:
                value = None
            values.extend(value if isinstance(value, list) else [value])
        return True

    try:
        for line in nm.exchange:
            if line.sender is not nm.sender:
                continue  # what a conforming peer answers: not sent, not compared
            since = len(values)
            send(line.data)
            obj = line.json()
            request = isinstance(obj, dict) and "method" in obj and "id" in obj
            if request and obj["method"] == "subscriptions/listen":
                done: Callable[[], bool] = functools.partial(acked, obj["id"], since)
            else:
                done = functools.partial(answered, obj.get("id"), since)
            if request and not pump(done, timeout):
                return None, tuple(lines)
        since = len(values)
        send(nm.message)
        barrier: dict[str, Any] = {"jsonrpc": "2.0", "id": "probe-barrier", "method": "ping"}
        if not VERSIONS[nm.version].policy.handshake:
            barrier["method"] = "server/discover"
            barrier["params"] = {
                "_meta": {
                    META_VERSION: nm.version,
                    META_CAPABILITIES: {},
                    META_CLIENT_INFO: dict(PROBE_INFO),
                }
            }

        def replied() -> bool:
            return any(is_answer(v) and v.get("id") != "probe-barrier" for v in values[since:])

        due = nm.expect.reply in ("error", "result")
        if due:
            pump(replied, min(timeout, FIRST_WAIT))
        mark = len(values)
        send(dumps(barrier))
        alive = pump(lambda: answered("probe-barrier", mark), timeout)
        if due and alive and not replied():
            pump(replied, min(timeout, GRACE))
        replies = [
            v
            for v in values[since:]
            if not (isinstance(v, dict) and v.get("id") == "probe-barrier")
        ]
        if http and nm.expect.reply == "none":
            # Streamable HTTP lets a server refuse a notification or response with a 4xx
            # and an id-less error.
            replies = [v for v in replies if not (isinstance(v, dict) and v.get("id") is None)]
        problem = nm.expect.check(replies)
        if problem is not None and http and nm.expect.reply == "error" and len(replies) == 1:
            # The HTTP layer refused the POST with an id-less JSON-RPC error: as good as a
            # bare 4xx (the deterministic check takes it the same way, see judge).
            only = replies[0]
            if isinstance(only, dict) and only.get("id") is None and "error" in only:
                problem = None
        if problem is not None and http and headerless(nm.message):
            codes = {
                v["error"].get("code")
                for v in replies
                if isinstance(v, dict) and isinstance(v.get("error"), dict)
            }
            if codes == {int(ErrorCode.HEADER_MISMATCH)} and len(replies) == 1:
                problem = None  # refused for its headers, before its body was read
        if problem is None and not alive:
            problem = "the peer stopped answering after this message"
        return problem, tuple(lines)
    finally:
        note = channel.close()
        if note:
            lines.append(WireLine("note", note.encode()))
