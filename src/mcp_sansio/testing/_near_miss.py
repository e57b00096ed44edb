"""Hypothesis strategies for near-miss invalid MCP messages.

:func:`near_misses` generates :class:`NearMiss` values. Each one breaks exactly one rule of
the catalog (:data:`~mcp_sansio.testing.RULES`) and is valid by construction in every other
respect: its ids are fresh, its params are drawn from the version's schema, the
capabilities it needs are declared, and it arrives in the state it needs. A near miss
is a little script:

- :attr:`Scenario.exchange`: the valid lines both sides send first (the handshake, a
  request left in flight, a subscription, …), as :class:`Line` values. The *sender* is
  the side that breaks the rule; the *receiver* must enforce it. Lines of the receiver
  are what a receiver that follows the protocol sends at that point (its answers, and
  for some rules requests of its own: see :attr:`Scenario.receiver_initiates`);
- :attr:`Scenario.message`: the offending bytes (one line; for the envelope rules a raw
  malformed one);
- :attr:`NearMiss.expect`: what the receiver must answer (:class:`Expect`, derived from
  the :class:`~mcp_sansio.testing.Rule`);
- :attr:`NearMiss.repaired`: the same script with the one broken thing put right (the
  message repaired, or the missing state or capability supplied), which the receiver
  must accept; ``None`` where no valid counterpart exists (a 2026-07-28 server never
  sends requests, so no fix turns one into a valid message).

The receiver is assumed to speak only :attr:`Scenario.version` and to have declared
:attr:`Scenario.server_capabilities` (a server) or
:attr:`Scenario.client_capabilities` (a client); :meth:`Scenario.connection` builds such
a :class:`~mcp_sansio.Connection` and :meth:`Scenario.play` runs the script against it.

Behaviour that differs between versions is read from the version tables
(:data:`mcp_sansio._versions.VERSIONS`: methods, their senders and capability gates,
batches, progress messages, elicitation modes, ``input_required``) and from the schema
files (params, results, capabilities), never from version strings.
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Final

from hypothesis import strategies as st

from mcp_sansio._connection import (
    META_SUBSCRIPTION,
)
from mcp_sansio._framing import DEFAULT_MAX_MESSAGE_SIZE
from mcp_sansio._state import Role
from mcp_sansio._versions import VERSIONS, Kind
from mcp_sansio.testing._faults import FAULTS
from mcp_sansio.testing._faults._ground import LISTEN_FLAGS, methods_of
from mcp_sansio.testing._rules import RULES, rule
from mcp_sansio.testing._scenario import (
    CANCELLED,
    DISCOVER,
    INVENTED,
    LEGACY_VERSIONS,
    LISTEN,
    MESSAGE,
    MIN_MESSAGE_SIZE,
    PROGRESS,
    UNKNOWN_VERSIONS,
    UPDATED,
    Expect,
    NearMiss,
    notification_msg,
    request_msg,
    response_msg,
    schema_capabilities,
)
from mcp_sansio.testing._schema_strategies import (
    from_schema,
)
from mcp_sansio.testing._script import (
    NO_REPLY,
    Ctx,
    Script,
    error_expect,
    listen_flags,
    progress_notification,
    sender_request,
)
from mcp_sansio.testing._script_faults import from_fault

# ---------------------------------------------------------------------------- generators

_Generator = Callable[[Ctx], st.SearchStrategy[NearMiss]]
_GENERATORS: dict[str, _Generator] = {}


def _generator(name: str) -> Callable[[_Generator], _Generator]:
    def register(fn: _Generator) -> _Generator:
        assert name in RULES, name
        _GENERATORS[name] = fn
        return fn

    return register


# -- envelope


_BAD_JSONRPC: Final[list[Any]] = ["1.0", "2", "2.0 ", "", 2.0, 2, None, ["2.0"]]
_BAD_IDS: Final[list[Any]] = [None, True, False, 1.5, -0.25, 1e300, [], {}, [1], {"id": 1}]
_BAD_METHODS: Final[list[Any]] = [1, None, True, [], {}, ["tools/list"], 0.5]
_BAD_PARAMS: Final[list[Any]] = [[], [1, 2], "params", 1, True, None]
_NOT_OBJECTS: Final[list[Any]] = ["a string", 42, None, True, 1.5]


def _is_id(value: Any) -> bool:
    return type(value) in (int, str)


# -- lifecycle


def _client_requests_after_handshake(s: Script) -> list[str]:
    return [
        m
        for m in methods_of(s.spec, Role.CLIENT, Kind.REQUEST, caps=s.caps[Role.SERVER])
        if m != "ping"
    ]


@_generator("lifecycle.request-before-initialize")
@st.composite
def _request_before_initialize(draw: st.DrawFn, ctx: Ctx) -> NearMiss:
    s = Script(draw, ctx)
    s.filler()
    method = draw(st.sampled_from(_client_requests_after_handshake(s)))
    message = sender_request(s, method)
    repaired = s.fork()
    repaired.handshake()
    return s.near(
        "lifecycle.request-before-initialize",
        message,
        error_expect("lifecycle.request-before-initialize", message["id"]),
        repaired.scenario(message),
        f"{method} before initialize",
    )


@_generator("lifecycle.request-in-initialize-window")
@st.composite
def _request_in_initialize_window(draw: st.DrawFn, ctx: Ctx) -> NearMiss:
    """A client request after the initialize result, before notifications/initialized:
    valid (the client waits only for the server's answer to initialize), so served."""
    s = Script(draw, ctx)
    s.handshake("initialized")
    s.filler()
    methods = [
        m
        for m in methods_of(s.spec, s.sender, Kind.REQUEST, caps=s.caps[s.receiver])
        if m != "ping"
    ]
    message = sender_request(s, draw(st.sampled_from(methods)))
    return s.near(
        "lifecycle.request-in-initialize-window",
        message,
        Expect(reply="result", id=message["id"]),
        s.scenario(message),
        f"{message['method']} before notifications/initialized",
    )


@_generator("lifecycle.server-request-before-initialized")
@st.composite
def _server_request_before_initialized(draw: st.DrawFn, ctx: Ctx) -> NearMiss:
    """A server request other than ping before notifications/initialized: the server's
    SHOULD NOT; our client refuses it (the receiver's choice, never charged to it)."""
    s = Script(draw, ctx)
    stage = draw(st.sampled_from(["idle", "initializing", "initialized"]))
    s.handshake(stage)
    s.filler()
    methods = [
        m
        for m in methods_of(s.spec, s.sender, Kind.REQUEST, caps=s.caps[s.receiver])
        if m != "ping"
    ]
    message = sender_request(s, draw(st.sampled_from(methods)))
    repaired = s.fork()
    repaired.handshake()
    return s.near(
        "lifecycle.server-request-before-initialized",
        message,
        error_expect("lifecycle.server-request-before-initialized", message["id"]),
        repaired.scenario(message),
        f"{message['method']} from the server in stage {stage}",
    )


@_generator("lifecycle.notification-before-initialized")
@st.composite
def _notification_before_initialized(draw: st.DrawFn, ctx: Ctx) -> NearMiss:
    # Before the initialize result: once it is out, the notifications the capabilities
    # allow are open to both sides (the text restricts only requests in the window).
    s = Script(draw, ctx)
    stage = draw(st.sampled_from(["idle", "initializing"]))
    s.handshake(stage)
    methods = [
        m
        for m in methods_of(s.spec, s.sender, Kind.NOTIFICATION, caps=s.caps[s.sender])
        if m not in (CANCELLED, PROGRESS, MESSAGE, UPDATED)
    ]
    method = draw(st.sampled_from(methods))
    message = notification_msg(method, s.params(s.sender, method))
    repaired = s.fork()
    repaired.handshake()
    return s.near(
        "lifecycle.notification-before-initialized",
        message,
        NO_REPLY,
        repaired.scenario(message),
        f"{method} in stage {stage}",
    )


@_generator("lifecycle.initialize-version")
@st.composite
def _initialize_version(draw: st.DrawFn, ctx: Ctx) -> NearMiss:
    s = Script(draw, ctx)
    s.filler()
    requested = draw(UNKNOWN_VERSIONS)
    rid = s.new_id(Role.CLIENT)
    message = request_msg(rid, "initialize", s.initialize_params(requested))
    return s.near(
        "lifecycle.initialize-version",
        message,
        Expect(reply="result", id=rid, versions=frozenset(LEGACY_VERSIONS)),
        s.scenario(request_msg(rid, "initialize", s.initialize_params())),
        f"initialize asking for unknown version {requested!r}",
    )


@_generator("lifecycle.unsupported-version-result")
@st.composite
def _unsupported_version_result(draw: st.DrawFn, ctx: Ctx) -> NearMiss:
    s = Script(draw, ctx)
    s.handshake("initializing")
    chosen = draw(UNKNOWN_VERSIONS)
    return s.near(
        "lifecycle.unsupported-version-result",
        response_msg(s.init_id, s.initialize_result(chosen)),
        Expect(reply="close"),
        s.scenario(response_msg(s.init_id, s.initialize_result())),
        f"the server chose unknown version {chosen!r}",
    )


@_generator("lifecycle.initialize-stateless")
@st.composite
def _initialize_stateless(draw: st.DrawFn, ctx: Ctx) -> NearMiss:
    s = Script(draw, ctx)
    s.filler()
    legacy = draw(st.sampled_from(LEGACY_VERSIONS))
    rid = s.new_id(Role.CLIENT)
    message = request_msg(rid, "initialize", s.initialize_params(legacy))
    return s.near(
        "lifecycle.initialize-stateless",
        message,
        error_expect("lifecycle.initialize-stateless", rid),
        s.scenario(request_msg(rid, DISCOVER, {"_meta": s.meta()})),
        f"initialize for {legacy}",
    )


# -- progress and cancellation


@_generator("progress.not-increasing")
@st.composite
def _progress_not_increasing(draw: st.DrawFn, ctx: Ctx) -> NearMiss:
    s = Script(draw, ctx)
    s.opening()
    first = progress_notification(s)
    s.add(s.sender, first)
    params = first["params"]
    last = params["progress"]
    for _ in range(draw(st.integers(0, 2))):
        last = last + draw(st.integers(1, 100))
        s.notify(s.sender, PROGRESS, {**params, "progress": last})
    step = draw(st.sampled_from([0, 0.5, 1, 1000]))
    bad = {k: v for k, v in params.items() if k != "total"}
    bad["progress"] = last - step
    good = dict(bad, progress=last + draw(st.integers(1, 100)))
    return s.near(
        "progress.not-increasing",
        notification_msg(PROGRESS, bad),
        NO_REPLY,
        s.scenario(notification_msg(PROGRESS, good)),
        f"progress {bad['progress']!r} after {last!r}",
    )


@_generator("cancel.initialize")
@st.composite
def _cancel_initialize(draw: st.DrawFn, ctx: Ctx) -> NearMiss:
    s = Script(draw, ctx)
    s.handshake("initializing")
    s.filler()
    params: dict[str, Any] = {"requestId": s.init_id}
    if draw(st.booleans()):
        params["reason"] = draw(st.text(max_size=10))
    repaired = s.fork()
    ping = repaired.request(Role.CLIENT, "ping")
    return s.near(
        "cancel.initialize",
        notification_msg(CANCELLED, params),
        Expect(reply="none", pending=s.init_id),
        repaired.scenario(notification_msg(CANCELLED, dict(params, requestId=ping))),
        "a cancel naming initialize",
    )


# -- 2026-07-28


@_generator("stateless.server-request")
@st.composite
def _stateless_server_request(draw: st.DrawFn, ctx: Ctx) -> NearMiss:
    s = Script(draw, ctx)
    s.opening()
    pairs = sorted(
        (version, m)
        for version, other in VERSIONS.items()
        if other.policy.handshake
        for m in methods_of(other, Role.SERVER, Kind.REQUEST)
    )
    version, method = draw(st.sampled_from(pairs))
    rid = s.new_id(Role.SERVER)
    message = request_msg(rid, method, s.params(Role.SERVER, method, version=version))
    return s.near(
        "stateless.server-request",
        message,
        error_expect("stateless.server-request", rid),
        None,
        f"{method} (as in {version}) from a 2026 server",
    )


_INPUT_KINDS: Final = {
    # the kind of input → (client capability, request definition, result definition)
    "elicitation/create": ("elicitation", "ElicitRequest", "ElicitResult"),
    "sampling/createMessage": ("sampling", "CreateMessageRequest", "CreateMessageResult"),
    "roots/list": ("roots", "ListRootsRequest", "ListRootsResult"),
}


def _input_requests(
    s: Script, caps: Mapping[str, Any], *, at_least: str | None = None
) -> dict[str, Any]:
    """``inputRequests`` for what ``caps`` declares (and ``at_least`` one of that kind)."""
    kinds = [k for k, (cap, _, _) in _INPUT_KINDS.items() if cap in caps]
    chosen = s.draw(st.lists(st.sampled_from(kinds), max_size=3)) if kinds else []
    if at_least is not None:
        chosen.append(at_least)
    out = {}
    for index, kind in enumerate(chosen):
        request = copy.deepcopy(s.draw(from_schema(s.version, _INPUT_KINDS[kind][1])))
        out[f"k{index}"] = {
            "method": kind,
            **({"params": request["params"]} if "params" in request else {}),
        }
    return out


def _input_required_methods(s: Script, allowed: bool) -> list[str]:
    return [
        m
        for m in s.requests_of(Role.CLIENT)
        if s.spec.methods[m].input_required is allowed and m != LISTEN
    ]


@_generator("input-required.retry")
@st.composite
def _input_required_retry(draw: st.DrawFn, ctx: Ctx) -> NearMiss:
    s = Script(draw, ctx)
    s.opening()
    method = draw(st.sampled_from(_input_required_methods(s, True)))
    params = s.params(Role.CLIENT, method)
    assert params is not None
    first = s.request(Role.CLIENT, method, params)
    requests = _input_requests(s, s.caps[Role.CLIENT])
    result: dict[str, Any] = {"resultType": "input_required"}
    if requests:
        result["inputRequests"] = requests
    if not requests or draw(st.booleans()):
        result["requestState"] = draw(st.text(max_size=16))
    s.respond(Role.SERVER, first, result)
    retry = copy.deepcopy(params)
    if requests:
        retry["inputResponses"] = {
            key: draw(from_schema(s.version, _INPUT_KINDS[item["method"]][2]))
            for key, item in requests.items()
        }
    if "requestState" in result:
        retry["requestState"] = result["requestState"]
    rid = s.new_id(Role.CLIENT)
    message = request_msg(rid, method, retry)
    return s.near(
        "input-required.retry",
        message,
        Expect(reply="result", id=rid),
        s.scenario(message),
        f"the retry of {method} with {len(requests)} input responses",
    )


@_generator("input-required.invalid")
@st.composite
def _input_required_invalid(draw: st.DrawFn, ctx: Ctx) -> NearMiss:
    s = Script(draw, ctx)
    s.opening()
    ways = ["neither inputRequests nor requestState", "a requestState that is not a string"]
    ways.append("an input request of an unknown kind")
    if _input_required_methods(s, False):
        ways.append("a method that cannot ask for input")
    way = draw(st.sampled_from(ways))
    good: dict[str, Any] = {"resultType": "input_required", "requestState": draw(st.text())}
    bad = copy.deepcopy(good)
    allowed = draw(st.sampled_from(_input_required_methods(s, True)))
    method = allowed
    if way == "neither inputRequests nor requestState":
        del bad["requestState"]
    elif way == "a requestState that is not a string":
        bad["requestState"] = draw(st.sampled_from([1, None, [], {}, True]))
    elif way == "an input request of an unknown kind":
        kind = draw(st.sampled_from(["tools/call", "ping", "notifications/progress"]) | INVENTED)
        bad["inputRequests"] = {"k": {"method": kind, "params": {}}}
    else:
        method = draw(st.sampled_from(_input_required_methods(s, False)))
    base = s.fork()
    rid = s.request(Role.CLIENT, method, s.params(Role.CLIENT, method))
    if method == allowed:
        repaired = s.scenario(response_msg(rid, good))
    else:
        base.request(Role.CLIENT, allowed, base.params(Role.CLIENT, allowed), rid=rid)
        repaired = base.scenario(response_msg(rid, good))
    return s.near(
        "input-required.invalid",
        response_msg(rid, bad),
        NO_REPLY,
        repaired,
        f"input_required for {method} with {way}",
    )


@_generator("input-required.undeclared-capability")
@st.composite
def _input_required_undeclared(draw: st.DrawFn, ctx: Ctx) -> NearMiss:
    kind = draw(st.sampled_from(sorted(_INPUT_KINDS)))
    capability = _INPUT_KINDS[kind][0]
    full = schema_capabilities(ctx.spec.version, Role.CLIENT)
    lacking = {k: v for k, v in full.items() if k != capability}
    s = Script(draw, ctx, client_caps=lacking)
    s.opening()
    method = draw(st.sampled_from(_input_required_methods(s, True)))
    rid = s.request(Role.CLIENT, method, s.params(Role.CLIENT, method))
    result = {
        "resultType": "input_required",
        "inputRequests": _input_requests(s, {}, at_least=kind),
    }
    return s.near(
        "input-required.undeclared-capability",
        response_msg(rid, result),
        NO_REPLY,
        s.recap(client_caps=full).scenario(response_msg(rid, result)),
        f"input_required asking for {kind} without the capability {capability}",
    )


def _stream_note(method: str, sid: Any, uri: str | None = None) -> dict[str, Any]:
    params: dict[str, Any] = {"_meta": {META_SUBSCRIPTION: sid}}
    if uri is not None:
        params["uri"] = uri
    return notification_msg(method, params)


def _opted_in(wanted: Mapping[str, Any]) -> list[tuple[str, str | None]]:
    out: list[tuple[str, str | None]] = [
        (LISTEN_FLAGS[flag], None)
        for flag, on in sorted(wanted.items())
        if flag in LISTEN_FLAGS and on
    ]
    out += [(UPDATED, uri) for uri in wanted.get("resourceSubscriptions", ())]
    return out


@_generator("subscriptions.listen-ack-first")
@st.composite
def _listen_ack_first(draw: st.DrawFn, ctx: Ctx) -> NearMiss:
    s = Script(draw, ctx)
    s.opening()
    wanted = listen_flags(s)
    if not _opted_in(wanted):
        wanted[draw(st.sampled_from(sorted(LISTEN_FLAGS)))] = True
    repaired = s.fork()
    rid = s.listen(wanted, ack=False)
    repaired.listen(wanted, ack=True, rid=rid)
    method, uri = draw(st.sampled_from(_opted_in(wanted)))
    message = _stream_note(method, rid, uri)
    return s.near(
        "subscriptions.listen-ack-first",
        message,
        NO_REPLY,
        repaired.scenario(message),
        f"{method} before the acknowledgement",
    )


@_generator("subscriptions.not-opted-in")
@st.composite
def _not_opted_in(draw: st.DrawFn, ctx: Ctx) -> NearMiss:
    s = Script(draw, ctx)
    s.opening()
    flag = draw(st.sampled_from(sorted(LISTEN_FLAGS)))
    uris = ["file:///a.txt", "mcp://x/y"]
    ways = ["a type not opted into", "a resource not subscribed", "no subscriptionId"]
    ways.append("the subscriptionId of no listen")
    way = draw(st.sampled_from(ways))
    wanted = {k: v for k, v in listen_flags(s).items() if k != flag}
    fixed_wanted = dict(wanted)
    uri: str | None = None
    if way == "a resource not subscribed":
        wanted["resourceSubscriptions"] = uris[:1]
        fixed_wanted["resourceSubscriptions"] = uris
        method, uri = UPDATED, uris[1]
    else:
        fixed_wanted[flag] = True
        method = LISTEN_FLAGS[flag]
    if way in ("a type not opted into", "a resource not subscribed"):
        repaired = s.fork()
        rid = s.listen(wanted)
        repaired.listen(fixed_wanted, rid=rid)
        message = fixed = _stream_note(method, rid, uri)
    else:
        rid = s.listen(fixed_wanted)
        repaired = s.fork()
        fixed = _stream_note(method, rid, uri)
        if way == "no subscriptionId":
            message = notification_msg(method, {"uri": uri} if uri else None)
        else:
            message = _stream_note(method, s.new_id(Role.CLIENT), uri)
    return s.near(
        "subscriptions.not-opted-in",
        message,
        NO_REPLY,
        repaired.scenario(fixed),
        f"{method} with {way}",
    )


for _name in FAULTS:
    _GENERATORS[_name] = functools.partial(from_fault, name=_name)

assert set(_GENERATORS) == set(RULES), set(RULES) ^ set(_GENERATORS)


# ---------------------------------------------------------------------------- the API


def near_misses(
    version: str,
    *,
    sender: Role = Role.CLIENT,
    rules: Iterable[str] | None = None,
    max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
) -> st.SearchStrategy[NearMiss]:
    """Near misses of ``version`` sent by ``sender``: each breaks one rule.

    :param rules: the names of the rules to break (default: all); those that do not
        apply to ``version`` with ``sender.peer`` as the receiver are left out.
    :param max_message_size: the receiver's maximum message size, for
        ``envelope.oversized-message`` (at least :data:`MIN_MESSAGE_SIZE`).
    :raises KeyError: an unknown version or rule name.
    :raises ValueError: none of the rules applies, or ``max_message_size`` is too small.
    """
    spec = VERSIONS[version]
    if max_message_size < MIN_MESSAGE_SIZE:
        raise ValueError(f"max_message_size must be at least {MIN_MESSAGE_SIZE}")
    names = list(RULES) if rules is None else [rule(name).name for name in rules]
    receiver = sender.peer
    chosen = [name for name in names if RULES[name].applies(version, receiver)]
    if not chosen:
        raise ValueError(
            f"none of the rules {names} applies to {version} with a {receiver.value} receiving"
        )
    ctx = Ctx(spec, sender, max_message_size)
    return st.one_of([_GENERATORS[name](ctx) for name in chosen])
