"""S"""

from __future__ import annotations

import string
from collections.abc import Callable, Mapping
from typing import Any, Final, Protocol

import attrs
from hypothesis import strategies as st

from mcp_sansio._connection import META_CAPABILITIES
from mcp_sansio._errors import ErrorCode
from mcp_sansio._events import (
    RequestId,
)
from mcp_sansio._state import Role
from mcp_sansio._versions import VERSIONS, Direction, Era, Kind, capability_met
from mcp_sansio.testing._conversation import Conversation
from mcp_sansio.testing._wire import Demand, Shot, T, dumps, refusal

# ---------------------------------------------------------------------- near-miss builders


class Draw(Protocol):
    """Where a shot builder gets its variations: ``draw(strategy, canonical)`` returns a
    value of ``strategy`` (the fuzz phase) or ``canonical`` (the deterministic checks)."""

    def __call__(self, strategy: st.SearchStrategy[T], canonical: T, /) -> T: ...


def canonical(strategy: st.SearchStrategy[T], value: T, /) -> T:
    """The :data:`Draw` of the deterministic checks: always the canonical choice."""
    return value


#: A shot builder: the near-miss for one rule in the conversation's current state, or why
#: there is none (a string).
Builder = Callable[[Conversation, Draw], "Shot | str"]

_INVALID: Final = int(ErrorCode.INVALID_REQUEST)
_NOT_FOUND: Final = int(ErrorCode.METHOD_NOT_FOUND)
_PARAMS: Final = int(ErrorCode.INVALID_PARAMS)
_ALL_METHODS: Final = frozenset(m for spec in VERSIONS.values() for m in spec.methods)

_BROKEN_JSON: Final = (
    b'{"jsonrpc": "2.0", "id": 1, "method": "ping"',
    b'{"jsonrpc": "2.0", "id": 1, "method": "ping",}',
    b"{'jsonrpc': '2.0', 'id': 1, 'method': 'ping'}",
    b'{"jsonrpc": "2.0", "id": 1, "method": "ping"}}',
    b"\xff\xfe{}",
    b"nul",
    b'{"jsonrpc": "2.0", "id": 01, "method": "ping"}',
)


def _request(
    conv: Conversation, rid: RequestId | None, method: Any, params: Any = None
) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
    if conv.era is Era.STATELESS:
        params = dict(params or {})
        params.setdefault("_meta", conv.meta())
    if params is not None:
        message["params"] = params
    return message


def _barrier_method(conv: Conversation) -> str:
    return "server/discover" if conv.era is Era.STATELESS else "ping"


def _parse_error(conv: Conversation, draw: Draw) -> Shot | str:
    valid = dumps(_request(conv, 1, _barrier_method(conv)))
    cut = st.integers(1, len(valid) - 1).map(lambda n: valid[:n])
    data = draw(st.sampled_from(_BROKEN_JSON) | cut, _BROKEN_JSON[0])
    return Shot(
        "envelope.parse-error",
        data,
        refusal("envelope.parse-error", (None,)),
        "a line that is not JSON",
    )


_ENVELOPE_FAULTS: Final = (
    "no jsonrpc",
    'jsonrpc "1.0"',
    "method 42",
    "params an array",
    "id null",
    "id 1.5",
    "id true",
    "id an object",
    "not an object",
)


def _invalid_request(conv: Conversation, draw: Draw) -> Shot | str:
    fault = draw(st.sampled_from(_ENVELOPE_FAULTS), _ENVELOPE_FAULTS[0])
    rid = conv.fresh_id()
    message: Any = _request(conv, rid, _barrier_method(conv))
    readable = True
    if fault == "no jsonrpc":
        del message["jsonrpc"]
    elif fault == 'jsonrpc "1.0"':
        message["jsonrpc"] = "1.0"
    elif fault == "method 42":
        message["method"] = 42
    elif fault == "params an array":
        message["params"] = [message.get("params")]
    else:
        readable = False
        if fault == "id null":
            message["id"] = None
        elif fault == "id 1.5":
            message["id"] = 1.5
        elif fault == "id true":
            message["id"] = True
        elif fault == "id an object":
            message["id"] = {"id": rid}
        else:
            message = draw(st.sampled_from([42, "ping", None, True]), 42)
    ids: tuple[RequestId | None, ...] = (rid, None) if readable else (None,)
    due = refusal("envelope.invalid-request", ids)
    if fault == "params an array":
        # JSON-RPC 2.0 allows params by position; MCP's schema has an object: the request
        # is refused, with a code neither text names (-32600 or -32602 are both fair).
        due = attrs.evolve(due, codes=())
    return Shot("envelope.invalid-request", dumps(message), due, f"a bad envelope ({fault})")


def _batch_not_allowed(conv: Conversation, draw: Draw) -> Shot | str:
    if VERSIONS[conv.version].batches:
        return f"{conv.version} has batches"
    count = draw(st.integers(1, 3), 1)
    members = [_request(conv, conv.fresh_id(), _barrier_method(conv)) for _ in range(count)]
    return Shot(
        "envelope.batch-not-allowed",
        dumps(members),
        refusal("envelope.batch-not-allowed", (None,)),
        "a JSON array (a batch) where the version has none",
    )


def _empty_batch(conv: Conversation, draw: Draw) -> Shot | str:
    if not VERSIONS[conv.version].batches:
        return f"{conv.version} has no batches"
    return Shot(
        "envelope.empty-batch", b"[]", refusal("envelope.empty-batch", (None,)), "an empty batch"
    )


def _batch_mixed(conv: Conversation, draw: Draw) -> Shot | str:
    if not VERSIONS[conv.version].batches:
        return f"{conv.version} has no batches"
    rid = conv.fresh_id()
    members = [
        _request(conv, rid, "ping"),
        {"jsonrpc": "2.0", "id": conv.fresh_id(), "result": {}},
    ]
    return Shot(
        "envelope.batch-mixed",
        dumps(draw(st.permutations(members), members)),
        refusal("envelope.batch-mixed", (None,)),
        "a batch mixing a request and a response",
    )


def _invalid_response(conv: Conversation, draw: Draw) -> Shot | str:
    rid = conv.fresh_id()
    faults: list[dict[str, Any]] = [
        {"jsonrpc": "2.0", "id": rid, "result": {}, "error": {"code": -1, "message": "x"}},
        {"jsonrpc": "2.0", "id": rid, "result": 42},
        {"jsonrpc": "2.0", "id": rid, "error": {"message": "no code"}},
        {"jsonrpc": "2.0", "result": {}},
    ]
    return Shot(
        "envelope.invalid-response",
        dumps(draw(st.sampled_from(faults), faults[0])),
        Demand("none"),
        "a malformed response",
    )


def _second_initialize(conv: Conversation, draw: Draw) -> Shot | str:
    if conv.era is Era.STATELESS:
        return "2026-07-28 has no initialize"
    if conv.negotiated is None:
        return "the session is not initialized"
    rid = conv.fresh_id()
    message = _request(conv, rid, "initialize", conv.initialize_params(conv.negotiated))
    return Shot(
        "lifecycle.second-initialize",
        dumps(message),
        refusal("lifecycle.second-initialize", (rid,)),
        "initialize again, in an initialized session",
    )


def _duplicate_id(conv: Conversation, draw: Draw) -> Shot | str:
    if conv.era is Era.STATELESS:
        return "2026-07-28 ids may be reused once answered (in-flight reuse is not probed)"
    used = [key[1] for key, answers in conv._answers.items() if answers]
    if not used:
        return "no request answered yet"
    rid = draw(st.sampled_from(used), used[-1])
    return Shot(
        "ids.duplicate-request-id",
        dumps(_request(conv, rid, "ping")),
        refusal("ids.duplicate-request-id", (rid,)),
        f"ping reusing id {rid!r} of an answered request",
    )


def _string_int_ids(conv: Conversation, draw: Draw) -> Shot | str:
    if conv.era is Era.STATELESS:
        return "not probed in 2026-07-28"
    used = [key[1] for key, answers in conv._answers.items() if answers and key[0] == "int"]
    taken = {key[1] for key in (*conv._answers, *conv.used_ids) if key[0] == "str"}
    used = [n for n in used if str(n) not in taken]
    if not used:
        return "no integer id answered yet"
    rid = str(draw(st.sampled_from(used), used[-1]))
    return Shot(
        "ids.string-and-int-are-different",
        dumps(_request(conv, rid, "ping")),
        Demand("result", (), (rid,)),
        f"ping with id {rid!r}, the string of an integer id already used",
    )


def _unknown_response(conv: Conversation, draw: Draw) -> Shot | str:
    rid = conv.fresh_id()
    bodies: list[dict[str, Any]] = [
        {"result": {}},
        {"error": {"code": -32603, "message": "stray"}},
    ]
    body = draw(st.sampled_from(bodies), bodies[0])
    return Shot(
        "response.unknown-id",
        dumps({"jsonrpc": "2.0", "id": rid, **body}),
        Demand("none"),
        "a response to a request never sent",
    )


#: Plausible params of the gated requests, for the capability and direction near-misses.
_PLAUSIBLE: Final[Mapping[str, Mapping[str, Any]]] = {
    "resources/read": {"uri": "test://probe"},
    "resources/subscribe": {"uri": "test://probe"},
    "resources/unsubscribe": {"uri": "test://probe"},
    "prompts/get": {"name": "probe"},
    "tools/call": {"name": "probe", "arguments": {}},
    "logging/setLevel": {"level": "info"},
    "completion/complete": {
        "ref": {"type": "ref/prompt", "name": "probe"},
        "argument": {"name": "a", "value": ""},
    },
    "tasks/get": {"taskId": "probe"},
    "tasks/result": {"taskId": "probe"},
    "tasks/cancel": {"taskId": "probe"},
    "sampling/createMessage": {
        "messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}],
        "maxTokens": 1,
    },
    "elicitation/create": {
        "message": "hi",
        "requestedSchema": {"type": "object", "properties": {}},
    },
}


#: The direction of the requests each role receives.
_TO: Final = {Role.SERVER: Direction.CLIENT_TO_SERVER, Role.CLIENT: Direction.SERVER_TO_CLIENT}


def _undeclared(conv: Conversation, draw: Draw) -> Shot | str:
    peer = conv.peer.value
    caps = conv.server_capabilities if conv.peer is Role.SERVER else conv.client_capabilities
    if caps is None:
        return f"the {peer}'s capabilities are not known"
    spec = VERSIONS[conv.version]
    methods = sorted(
        name
        for name, r in spec.methods.items()
        if r.kind is Kind.REQUEST
        and r.direction is _TO[conv.peer]
        and r.gate
        and not capability_met(caps, r.gate)
    )
    if not methods:
        return f"the {peer} declares every capability that gates a request"
    method = draw(st.sampled_from(methods), methods[0])
    rid = conv.fresh_id()
    return Shot(
        f"capability.undeclared-{peer}-capability",
        dumps(_request(conv, rid, method, dict(_PLAUSIBLE.get(method, {})))),
        refusal(f"capability.undeclared-{peer}-capability", (rid,)),
        f"{method}, whose capability the {peer} did not declare",
    )


_NAME_ALPHABET: Final = string.ascii_letters + string.digits + "/_-."


def _unknown_method(conv: Conversation, draw: Draw) -> Shot | str:
    names = st.text(_NAME_ALPHABET, min_size=1, max_size=24).filter(lambda m: m not in _ALL_METHODS)
    method = draw(names, "probe/no-such-method")
    rid = conv.fresh_id()
    return Shot(
        "method.unknown",
        dumps(_request(conv, rid, method)),
        refusal("method.unknown", (rid,)),
        f"a request for an unknown method {method!r}",
    )


def _unknown_notification(conv: Conversation, draw: Draw) -> Shot | str:
    names = st.text(_NAME_ALPHABET, min_size=1, max_size=24).filter(lambda m: m not in _ALL_METHODS)
    method = draw(names.map(lambda m: "notifications/" + m), "notifications/probe/no-such")
    return Shot(
        "method.unknown-notification",
        dumps({"jsonrpc": "2.0", "method": method}),
        Demand("none"),
        f"an unknown notification {method!r}",
    )


def _wrong_direction(conv: Conversation, draw: Draw) -> Shot | str:
    spec = VERSIONS[conv.version]
    other = conv.peer.peer  # the role that sends these requests: not the peer's to receive
    methods = sorted(
        name
        for name, r in spec.methods.items()
        if r.kind is Kind.REQUEST and r.direction is _TO[other] and name != "initialize"
    )
    if not methods:
        return f"{conv.version} has no request only a {conv.peer.value} sends"
    preferred = "tools/list" if "tools/list" in methods else methods[0]
    method = draw(st.sampled_from(methods), preferred)
    rid = conv.fresh_id()
    return Shot(
        "method.wrong-direction",
        dumps(_request(conv, rid, method, dict(_PLAUSIBLE.get(method, {})) or None)),
        refusal("method.wrong-direction", (rid,)),
        f"{method}, a request only a {conv.peer.value} sends",
    )


def _invalid_params(conv: Conversation, draw: Draw) -> Shot | str:
    options = (_client_params if conv.peer is Role.CLIENT else _server_params)(conv, draw)
    if not options:
        return f"no request of the {conv.peer.value}'s whose params the probe can break"
    method, params = draw(st.sampled_from(options), options[0])
    rid = conv.fresh_id()
    return Shot(
        "params.invalid",
        dumps(_request(conv, rid, method, params)),
        refusal("params.invalid", (rid,)),
        f"{method} with invalid params",
    )


def _server_params(conv: Conversation, draw: Draw) -> list[tuple[str, dict[str, Any]]]:
    """Requests to a server, with broken params."""
    caps = conv.server_capabilities or {}
    options: list[tuple[str, dict[str, Any]]] = []
    if conv.era is Era.INITIALIZE and capability_met(caps, ("logging",)):
        level = draw(st.sampled_from([42, "loud", None, ["info"]]), "loud")
        options.append(("logging/setLevel", {"level": level}))
    if conv.era is Era.INITIALIZE and capability_met(caps, ("resources", "subscribe")):
        options.append(("resources/subscribe", {"uri": draw(st.sampled_from([42, None]), 42)}))
    if conv.era is Era.STATELESS:
        bad = draw(st.sampled_from(["all", 42, None, ["toolsListChanged"]]), "all")
        options.append(("subscriptions/listen", {"notifications": bad}))
    if capability_met(caps, ("tools",)):
        options.append(("tools/call", {"arguments": {}}))
    return options


def _client_params(conv: Conversation, draw: Draw) -> list[tuple[str, dict[str, Any]]]:
    """Requests to a client, of the capabilities it declared, with broken params."""
    caps = conv.client_capabilities or {}
    options: list[tuple[str, dict[str, Any]]] = []
    if capability_met(caps, ("sampling",)):
        sampling = dict(_PLAUSIBLE["sampling/createMessage"])
        broken = draw(st.sampled_from(["no maxTokens", "maxTokens a string"]), "no maxTokens")
        if broken == "no maxTokens":
            del sampling["maxTokens"]
        else:
            sampling["maxTokens"] = "ten"
        options.append(("sampling/createMessage", sampling))
    if VERSIONS[conv.version].methods.get("elicitation/create") and capability_met(
        caps, ("elicitation",)
    ):
        options.append(("elicitation/create", {"requestedSchema": {"type": "object"}}))
    return options


def _unknown_token(conv: Conversation, draw: Draw) -> Shot | str:
    if conv.era is Era.STATELESS:
        return "in 2026-07-28 only the server sends progress"
    token = draw(st.integers(0, 2**31) | st.text(max_size=8), "probe-token")
    return Shot(
        "progress.unknown-token",
        dumps(
            {
                "jsonrpc": "2.0",
                "method": "notifications/progress",
                "params": {"progressToken": token, "progress": 1},
            }
        ),
        Demand("none"),
        "progress for a token no request of the receiver's carries",
    )


#: The list-changed notifications each role sends, and the capability that gates each (the
#: first of a role is the canonical near miss).
_LIST_CHANGED: Final[Mapping[Role, tuple[tuple[str, tuple[str, ...]], ...]]] = {
    Role.CLIENT: (("notifications/roots/list_changed", ("roots", "listChanged")),),
    Role.SERVER: (
        ("notifications/tools/list_changed", ("tools", "listChanged")),
        ("notifications/prompts/list_changed", ("prompts", "listChanged")),
        ("notifications/resources/list_changed", ("resources", "listChanged")),
    ),
}


def _undeclared_notification(conv: Conversation, draw: Draw) -> Shot | str:
    methods = VERSIONS[conv.version].methods
    options = [
        (method, gate)
        for method, gate in _LIST_CHANGED[conv.peer.peer]
        if method in methods and not capability_met(conv.capabilities, gate)
    ]
    if not options:
        return f"{conv.version}: the probe declared every list-changed it may send, or has none"
    method, gate = draw(st.sampled_from(options), options[0])
    return Shot(
        "capability.undeclared-notification",
        dumps({"jsonrpc": "2.0", "method": method}),
        Demand("none"),
        f"{method} without declaring {'.'.join(gate)}",
    )


def _unknown_cancel(conv: Conversation, draw: Draw) -> Shot | str:
    if conv.era is Era.STATELESS and conv.transport == "http":
        return "2026-07-28 over HTTP cancels by closing the stream"
    target: Any = draw(st.sampled_from(["unknown", "answered", "malformed"]), "unknown")
    if target == "answered":
        answered = [key[1] for key, answers in conv._answers.items() if answers]
        rid: Any = answered[-1] if answered else conv.fresh_id()
    elif target == "malformed":
        rid = draw(st.sampled_from([None, 1.5, {"id": 1}]), None)
    else:
        rid = conv.fresh_id()
    return Shot(
        "cancel.unknown-request",
        dumps(
            {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": rid}}
        ),
        Demand("none"),
        f"a cancel naming no request in flight ({target})",
    )


def _missing_meta(conv: Conversation, draw: Draw) -> Shot | str:
    if conv.era is not Era.STATELESS:
        return "only 2026-07-28 has request _meta"
    rid = conv.fresh_id()
    variant = draw(
        st.sampled_from(["no params", "no _meta", "no version", "version 42"]), "no _meta"
    )
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": "server/discover"}
    if variant == "no _meta":
        message["params"] = {}
    elif variant == "no version":
        message["params"] = {"_meta": conv.meta(version=None)}
    elif variant == "version 42":
        message["params"] = {"_meta": conv.meta(version=42)}
    due = refusal("meta.missing", (rid,))
    if variant in ("no params", "no _meta"):
        # Without _meta the request names no era: a server that speaks the initialize era
        # too may take it as that era's request before initialize, which it may refuse with
        # any error.
        due = attrs.evolve(due, codes=())
    return Shot(
        "meta.missing",
        dumps(message),
        due,
        f"server/discover with {variant}",
    )


def _unsupported_version(conv: Conversation, draw: Draw) -> Shot | str:
    if conv.era is not Era.STATELESS:
        return "only 2026-07-28 has request _meta"
    rid = conv.fresh_id()
    version = draw(
        st.sampled_from(["1999-01-01", "2099-12-31", "2026-07-29", "latest"]), "1999-01-01"
    )
    message = {
        "jsonrpc": "2.0",
        "id": rid,
        "method": "server/discover",
        "params": {"_meta": conv.meta(version=version)},
    }

    def check(answer: Mapping[str, Any]) -> str | None:
        data = answer["error"].get("data")
        if not isinstance(data, dict) or not isinstance(data.get("supported"), list):
            return "the -32022 error lacks data.supported (a list of versions)"
        if data.get("requested") != version:
            return f"data.requested is {data.get('requested')!r}, not {version!r}"
        return None

    return Shot(
        "meta.unsupported-version",
        dumps(message),
        refusal("meta.unsupported-version", (rid,), check),
        f"a request for protocol version {version!r}",
    )


def _missing_capabilities(conv: Conversation, draw: Draw) -> Shot | str:
    if conv.era is not Era.STATELESS:
        return "only 2026-07-28 has request _meta"
    rid = conv.fresh_id()
    values: list[Any] = [None, "none", []]
    value = draw(st.sampled_from(values), None)
    meta = conv.meta(capabilities=None)
    if value is not None:
        meta[META_CAPABILITIES] = value
    return Shot(
        "meta.capabilities-missing",
        dumps(
            {"jsonrpc": "2.0", "id": rid, "method": "server/discover", "params": {"_meta": meta}}
        ),
        refusal("meta.capabilities-missing", (rid,)),
        "a request without clientCapabilities in _meta",
    )


#: The near-miss builders, by rule: what :func:`shot_builders` returns.
_BUILDERS: Final[Mapping[str, Builder]] = {
    "envelope.parse-error": _parse_error,
    "envelope.invalid-request": _invalid_request,
    "envelope.invalid-response": _invalid_response,
    "envelope.batch-not-allowed": _batch_not_allowed,
    "envelope.empty-batch": _empty_batch,
    "envelope.batch-mixed": _batch_mixed,
    "lifecycle.second-initialize": _second_initialize,
    "ids.duplicate-request-id": _duplicate_id,
    "ids.string-and-int-are-different": _string_int_ids,
    "response.unknown-id": _unknown_response,
    "capability.undeclared-server-capability": _undeclared,
    "capability.undeclared-notification": _undeclared_notification,
    "method.unknown": _unknown_method,
    "method.unknown-notification": _unknown_notification,
    "method.wrong-direction": _wrong_direction,
    "params.invalid": _invalid_params,
    "progress.unknown-token": _unknown_token,
    "cancel.unknown-request": _unknown_cancel,
    "meta.missing": _missing_meta,
    "meta.unsupported-version": _unsupported_version,
    "meta.capabilities-missing": _missing_capabilities,
}


# -- the near-misses a server sends to a client under test


def _undeclared_subcapability(conv: Conversation, draw: Draw) -> Shot | str:
    caps = conv.client_capabilities or {}
    spec = VERSIONS[conv.version]
    options: list[tuple[str, dict[str, Any], str]] = []
    if spec.elicitation_modes and capability_met(caps, ("elicitation",)):
        declared = caps.get("elicitation") or {}
        # An empty elicitation object declares form mode only.
        if not capability_met(declared, ("url",)):
            params: dict[str, Any] = {
                "mode": "url",
                "message": "hi",
                "url": "https://example.com/probe",
                "elicitationId": "probe",
            }
            options.append(("elicitation/create", params, "URL-mode elicitation"))
    if (
        spec.sampling_tools
        and capability_met(caps, ("sampling",))
        and not capability_met(caps, ("sampling", "tools"))
    ):
        sampling: dict[str, Any] = dict(_PLAUSIBLE["sampling/createMessage"])
        sampling["tools"] = [{"name": "probe", "inputSchema": {"type": "object"}}]
        options.append(("sampling/createMessage", sampling, "sampling with tools"))
    if not options:
        return "the client declares every sub-capability the probe can ask for"
    method, params, what = draw(st.sampled_from(options), options[0])
    rid = conv.fresh_id()
    due = refusal("capability.undeclared-client-subcapability", (rid,))
    if method == "sampling/createMessage":
        # The -32602 sentence is elicitation's; for sampling with tools the text asks for
        # an error without naming its code.
        due = attrs.evolve(due, codes=())
    return Shot(
        "capability.undeclared-client-subcapability",
        dumps(_request(conv, rid, method, params)),
        due,
        f"{what}, which the client did not declare",
    )


def _updated_not_subscribed(conv: Conversation, draw: Draw) -> Shot | str:
    uri = draw(st.sampled_from(["test://probe/never-subscribed", "file:///probe"]), "test://probe")
    return Shot(
        "resources.updated-not-subscribed",
        dumps(
            {"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": {"uri": uri}}
        ),
        Demand("none"),
        f"resources/updated for {uri!r}, never subscribed to",
    )


#: The near-miss builders fired at a client, by rule: what :func:`client_shot_builders`
#: returns (the envelope, id, method and notification ones are the same both ways).
_CLIENT_BUILDERS: Final[Mapping[str, Builder]] = {
    **{
        name: _BUILDERS[name]
        for name in (
            "envelope.parse-error",
            "envelope.invalid-request",
            "envelope.invalid-response",
            "envelope.batch-not-allowed",
            "envelope.empty-batch",
            "envelope.batch-mixed",
            "ids.duplicate-request-id",
            "ids.string-and-int-are-different",
            "response.unknown-id",
            "method.unknown",
            "method.unknown-notification",
            "progress.unknown-token",
            "cancel.unknown-request",
        )
    },
    "capability.undeclared-client-capability": _undeclared,
    "capability.undeclared-client-subcapability": _undeclared_subcapability,
    "capability.undeclared-notification": _undeclared_notification,
    "resources.updated-not-subscribed": _updated_not_subscribed,
    "method.wrong-direction": _wrong_direction,
    "params.invalid": _invalid_params,
}


def client_shot_builders() -> Mapping[str, Builder]:
    """The near-miss builders fired at a client under test (the probe plays its server),
    by the rule each one tests; called like those of :func:`shot_builders`, with a
    :class:`Conversation` whose peer is a client."""
    return _CLIENT_BUILDERS


def shot_builders() -> Mapping[str, Builder]:
    """The near-miss builders, by the rule each one tests. Each is called with an open
    :class:`Conversation` and a :data:`Draw`, and returns a :class:`Shot`, or a string
    saying why the rule does not apply in that conversation."""
    return _BUILDERS
