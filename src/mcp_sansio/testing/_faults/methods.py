"""The methods family: ``method.*``, ``params.*`` and ``capability.*`` (which methods a
side may send, with which params, under which declared capabilities)."""

from __future__ import annotations

import copy
import string
from collections.abc import Mapping
from typing import Any, Final

import attrs
from hypothesis import strategies as st

from mcp_sansio._state import LIFECYCLE_METHODS, Role
from mcp_sansio._versions import VERSIONS, Kind, capability_met
from mcp_sansio.testing._faults._ground import (
    SENDS,
    Draw,
    Fault,
    FaultBuilder,
    Ground,
    methods_of,
)
from mcp_sansio.testing._wire import Demand, refusal

ALL_METHODS: Final = frozenset(m for spec in VERSIONS.values() for m in spec.methods)
_NAME_ALPHABET: Final = string.ascii_letters + string.digits + "/_-."
_NAMES: Final = st.text(_NAME_ALPHABET, min_size=1, max_size=24).filter(
    lambda m: m not in ALL_METHODS
)

#: Plausible params of the gated requests, for a live peer (whose tools, prompts and
#: resources are not known): what :meth:`Ground.params_of` offers there.
PLAUSIBLE: Final[Mapping[str, Mapping[str, Any]]] = {
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


def _fallback(g: Ground, rid: Any) -> dict[str, Any] | None:
    """A valid request of the sender's with id ``rid``, or ``None`` (a server that sends
    no requests)."""
    if g.sender is Role.SERVER and not g.spec.policy.server_requests:
        return None
    return g.request(rid, g.barrier_method)


# ---------------------------------------------------------------------- capabilities


def undeclared_request(g: Ground, draw: Draw) -> Fault | str:
    receiver = g.receiver.value
    name = f"capability.undeclared-{receiver}-capability"
    caps = g.capabilities(g.receiver)
    if caps is None:
        return f"the {receiver}'s capabilities are not known"
    methods = sorted(
        method
        for method, r in g.spec.methods.items()
        if r.kind is Kind.REQUEST
        and r.direction is SENDS[g.sender]
        and r.gate
        and not capability_met(caps, r.gate)
    )
    if not methods:
        return f"the {receiver} declares every capability that gates a request"
    method = draw(st.sampled_from(methods), methods[0])
    rid = g.fresh_id()
    params = g.params_of(method)
    message = g.request(rid, method, {} if params is None else params)
    return Fault(
        name,
        message,
        refusal(name, (rid,)),
        f"{method}, whose capability the {receiver} did not declare",
        repaired=message if g.repairs else None,
    )


#: Sub-capabilities of the client's a server may ask for without their being declared:
#: (version field, method, the capability path it needs, params, what it is).
_SUBCAPABILITIES: Final = (
    (
        "elicitation_modes",
        "elicitation/create",
        ("elicitation", "url"),
        {
            "mode": "url",
            "message": "hi",
            "url": "https://example.com/probe",
            "elicitationId": "probe",
        },
        "URL-mode elicitation",
    ),
    (
        "sampling_tools",
        "sampling/createMessage",
        ("sampling", "tools"),
        {
            **PLAUSIBLE["sampling/createMessage"],
            "tools": [{"name": "probe", "inputSchema": {"type": "object"}}],
        },
        "sampling with tools",
    ),
    (
        "elicitation_modes",
        "elicitation/create",
        ("elicitation", "form"),
        {"mode": "form", "message": "hi", "requestedSchema": {"type": "object", "properties": {}}},
        "form-mode elicitation",
    ),
    (
        "sampling_tools",
        "sampling/createMessage",
        ("sampling", "context"),
        {**PLAUSIBLE["sampling/createMessage"], "includeContext": "thisServer"},
        "sampling with context",
    ),
)


def _declares(caps: Mapping[str, Any], path: tuple[str, ...]) -> bool:
    if path == ("elicitation", "form"):
        # An empty elicitation object declares form mode only.
        declared = caps.get("elicitation") or {}
        return not declared or capability_met(declared, ("form",))
    return capability_met(caps, path)


def undeclared_subcapability(g: Ground, draw: Draw) -> Fault | str:
    caps = g.capabilities(Role.CLIENT) or {}
    options = [
        (method, params, what)
        for field, method, path, params, what in _SUBCAPABILITIES
        if getattr(g.spec, field)
        and method in g.spec.methods
        and capability_met(caps, path[:1])
        and not _declares(caps, path)
    ]
    if not options:
        return "the client declares every sub-capability the probe can ask for"
    method, params, what = draw(st.sampled_from(options), options[0])
    rid = g.fresh_id()
    due = refusal("capability.undeclared-client-subcapability", (rid,))
    if method == "sampling/createMessage":
        # The -32602 sentence is elicitation's; for sampling with tools the text asks for
        # an error without naming its code.
        due = attrs.evolve(due, codes=())
    message = g.request(rid, method, copy.deepcopy(params))
    return Fault(
        "capability.undeclared-client-subcapability",
        message,
        due,
        f"{what}, which the client did not declare",
        repaired=message if g.repairs else None,
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


def undeclared_notification(g: Ground, draw: Draw) -> Fault | str:
    spec = g.spec
    caps = g.capabilities(g.sender) or {}
    listed = [m for m, _ in _LIST_CHANGED[g.sender]]
    others = [
        m
        for m in methods_of(spec, g.sender, Kind.NOTIFICATION)
        if spec.methods[m].gate and m not in listed
    ]
    options = [
        (method, spec.methods[method].gate)
        for method in (*listed, *others)
        if method in spec.methods
        and not capability_met(caps, spec.methods[method].gate)
        and g.sends_unsolicited(method)
    ]
    if not options:
        return f"{g.version}: the probe declared every list-changed it may send, or has none"
    method, gate = draw(st.sampled_from(options), options[0])
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    params = g.params_of(method)
    if params is not None:
        message["params"] = params
    return Fault(
        "capability.undeclared-notification",
        message,
        Demand("none"),
        f"{method} without declaring {'.'.join(gate)}",
        repaired=message if g.repairs else None,
    )


# ---------------------------------------------------------------------- methods


def unknown_method(g: Ground, draw: Draw) -> Fault | str:
    spec = g.spec
    elsewhere = sorted(
        {
            (version, m)
            for version, other in VERSIONS.items()
            for m in methods_of(other, g.sender, Kind.REQUEST)
            if m not in spec.methods
        }
    )
    notes = sorted(
        set(methods_of(spec, Role.CLIENT, Kind.NOTIFICATION))
        | set(methods_of(spec, Role.SERVER, Kind.NOTIFICATION))
    )
    ways = ["an invented method", "a notification's name"]
    if elsewhere:
        ways.append("a method of another version")
    way = draw(st.sampled_from(ways), ways[0])
    params: Any = None
    if way == "an invented method":
        method = draw(_NAMES, "probe/no-such-method")
    elif way == "a notification's name":
        method = draw(st.sampled_from(notes), notes[0])
        params = g.params_of(method, as_request=True)
    else:
        version, method = draw(st.sampled_from(elsewhere), elsewhere[0])
        params = g.params_of(method, version=version, as_request=True)
    rid = g.fresh_id()
    why = f"a request for an unknown method {method!r}"
    return Fault(
        "method.unknown",
        g.request(rid, method, params),
        refusal("method.unknown", (rid,)),
        why if way == ways[0] else f"{why} ({way})",
        repaired=_fallback(g, rid) if g.repairs else None,
    )


def unknown_notification(g: Ground, draw: Draw) -> Fault | str:
    spec = g.spec
    elsewhere = sorted(
        {
            (version, m)
            for version, other in VERSIONS.items()
            for m in methods_of(other, g.sender, Kind.NOTIFICATION)
            if m not in spec.methods
        }
    )
    requests = sorted(
        m for m, r in spec.methods.items() if r.kind is Kind.REQUEST and m not in LIFECYCLE_METHODS
    )
    ways = ["an invented method", "a request's name"]
    if elsewhere:
        ways.append("a notification of another version")
    way = draw(st.sampled_from(ways), ways[0])
    params: Any = None
    if way == "an invented method":
        prefix = draw(st.sampled_from(["notifications/", ""]), "notifications/")
        method = prefix + draw(_NAMES, "probe/no-such")
        if method in ALL_METHODS:
            method = "notifications/probe/no-such"
    elif way == "a request's name":
        method = draw(st.sampled_from(requests), requests[0])
        params = g.params_of(method, as_request=False)
    else:
        version, method = draw(st.sampled_from(elsewhere), elsewhere[0])
        params = g.params_of(method, version=version, as_request=False)
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        message["params"] = params
    why = f"an unknown notification {method!r}"
    return Fault(
        "method.unknown-notification",
        message,
        Demand("none"),
        why if way == ways[0] else f"{why} ({way})",
        repaired=g.valid(("notification",)) if g.repairs else None,
    )


def wrong_direction(g: Ground, draw: Draw) -> Fault | str:
    spec = g.spec
    receiver = g.receiver
    methods = sorted(
        m
        for m, r in spec.methods.items()
        if r.kind is Kind.REQUEST and r.direction is SENDS[receiver] and m != "initialize"
    )
    if not methods:
        return f"{g.version} has no request only a {receiver.value} sends"
    preferred = "tools/list" if "tools/list" in methods else methods[0]
    method = draw(st.sampled_from(methods), preferred)
    rid = g.fresh_id()
    params = g.params_of(method, as_request=True, sent_by=receiver)
    return Fault(
        "method.wrong-direction",
        g.request(rid, method, params or None),
        refusal("method.wrong-direction", (rid,)),
        f"{method}, a request only a {receiver.value} sends",
        repaired=_fallback(g, rid) if g.repairs else None,
    )


# ---------------------------------------------------------------------- params


def _hand_picked(g: Ground, draw: Draw) -> list[tuple[str, dict[str, Any]]]:
    """Broken params of requests any peer of the capabilities declared must refuse,
    needing no knowledge of its tools, prompts or resources."""
    spec = g.spec
    caps = g.capabilities(g.receiver) or {}
    options: list[tuple[str, dict[str, Any]]] = []
    if g.receiver is Role.SERVER:
        if "logging/setLevel" in spec.methods and capability_met(caps, ("logging",)):
            level = draw(st.sampled_from([42, "loud", None, ["info"]]), "loud")
            options.append(("logging/setLevel", {"level": level}))
        if "resources/subscribe" in spec.methods and capability_met(
            caps, ("resources", "subscribe")
        ):
            options.append(("resources/subscribe", {"uri": draw(st.sampled_from([42, None]), 42)}))
        if "subscriptions/listen" in spec.methods:
            bad = draw(st.sampled_from(["all", 42, None, ["toolsListChanged"]]), "all")
            options.append(("subscriptions/listen", {"notifications": bad}))
        if capability_met(caps, ("tools",)):
            options.append(("tools/call", {"arguments": {}}))
        return options
    if "sampling/createMessage" in spec.methods and capability_met(caps, ("sampling",)):
        sampling = dict(PLAUSIBLE["sampling/createMessage"])
        broken = draw(st.sampled_from(["no maxTokens", "maxTokens a string"]), "no maxTokens")
        if broken == "no maxTokens":
            del sampling["maxTokens"]
        else:
            sampling["maxTokens"] = "ten"
        options.append(("sampling/createMessage", sampling))
    if "elicitation/create" in spec.methods and capability_met(caps, ("elicitation",)):
        options.append(("elicitation/create", {"requestedSchema": {"type": "object"}}))
    return options


_WRONG: Final[Mapping[str, list[Any]]] = {
    "string": [0, True, None, [], {}],
    "integer": ["0", None, [], {}],
    "number": ["0", None, [], {}],
    "object": ["x", 0, [], None],
    "array": ["x", 0, {}, None],
    "boolean": ["true", 0, None],
    "id": [None, 1.5, True, [], {}],
}


def _by_table(g: Ground, draw: Draw, method: str) -> tuple[Any, Any, str]:
    """Valid params of ``method``, the same with one required param broken (by the
    version's table of required params), and how."""
    g.prepare(method)
    params = g.params_of(method)
    assert isinstance(params, dict), (method, params)
    key, kind, enum = draw(
        st.sampled_from(g.spec.required_params[method]), g.spec.required_params[method][0]
    )
    ways = ["missing"] if kind == "any" else ["missing", "of the wrong type"]
    if enum:
        ways.append("not one of its values")
    if g.spec.policy.handshake:
        ways.append("no params at all")
    way = draw(st.sampled_from(ways), ways[0])
    bad: Any = copy.deepcopy(params)
    if way == "missing":
        del bad[key]
    elif way == "of the wrong type":
        bad[key] = draw(st.sampled_from(_WRONG[kind]), _WRONG[kind][0])
    elif way == "not one of its values":
        bad[key] = draw(st.text(max_size=8).filter(lambda v: v not in (enum or ())), "x")
    else:
        bad = None
    return params, bad, "params missing" if bad is None else f"{key!r} {way}"


def invalid_params(g: Ground, draw: Draw, methods: frozenset[str] | None = None) -> Fault | str:
    hand = [(m, p) for m, p in _hand_picked(g, draw) if methods is None or m in methods]
    table = [m for m in g.params_methods() if methods is None or m in methods]
    options = [*(("hand", m) for m, _ in hand), *(("table", m) for m in table)]
    if not options:
        return f"no request of the {g.receiver.value}'s whose params the probe can break"
    source, method = draw(st.sampled_from(options), options[0])
    if source == "hand":
        g.prepare(method)
        bad: Any = dict(hand[[m for m, _ in hand].index(method)][1])
        fixed = g.params_of(method) if g.repairs else None
        why = f"{method} with invalid params"
    else:
        fixed, bad, how = _by_table(g, draw, method)
        why = f"{method} with invalid params ({how})"
    rid = g.fresh_id()
    return Fault(
        "params.invalid",
        g.request(rid, method, bad),
        refusal("params.invalid", (rid,)),
        why,
        repaired=g.request(rid, method, fixed) if g.repairs else None,
    )


#: The builders of this family, by rule.
FAULTS: Final[Mapping[str, FaultBuilder]] = {
    "capability.undeclared-server-capability": undeclared_request,
    "capability.undeclared-client-capability": undeclared_request,
    "capability.undeclared-client-subcapability": undeclared_subcapability,
    "capability.undeclared-notification": undeclared_notification,
    "method.unknown": unknown_method,
    "method.unknown-notification": unknown_notification,
    "method.wrong-direction": wrong_direction,
    "params.invalid": invalid_params,
}
