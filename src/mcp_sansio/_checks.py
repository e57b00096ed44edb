"""Checks of message contents that depend only on the message, the version and the
capabilities involved (no connection state). Each returns ``None`` when the content is
acceptable, or a ``(code, message)`` fault.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, Final

from ._errors import ErrorCode
from ._names import ELICITATION_CREATE, ROOTS_LIST, SAMPLING_CREATE_MESSAGE
from ._required_params import Required
from ._versions import VERSIONS, VersionSpec, capability_met

__all__ = [
    "LOG_LEVELS",
    "LOG_RANK",
    "NEGOTIATED_ONLY_SHOULD",
    "Fault",
    "elicitation_fault",
    "input_required_fault",
    "initialize_params_fault",
    "is_id",
    "is_number",
    "listen_params_fault",
    "progress_params_fault",
    "required_params_fault",
    "sampling_fault",
    "undeclared_is_soft",
]

#: A rule broken: the JSON-RPC code and a specific message.
Fault = tuple[int, str]

_PARAMS: Final = ErrorCode.INVALID_PARAMS

#: Logging levels, least severe first (the syslog order MCP uses).
LOG_LEVELS: Final = (
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
)
LOG_RANK: Final = {name: i for i, name in enumerate(LOG_LEVELS)}


def is_id(value: object) -> bool:
    """Whether ``value`` is a valid request id or progress token (a str or an int)."""
    cls = type(value)
    return cls is str or cls is int


def is_number(value: object) -> bool:
    """Whether ``value`` is a JSON number (an int or a finite float, not a bool; NaN and
    the infinities are no JSON, and orjson would write them as ``null``)."""
    cls = type(value)
    return cls is int or (cls is float and math.isfinite(value))  # type: ignore[arg-type]


def initialize_params_fault(params: Any) -> Fault | None:
    """The shape of ``initialize`` params: protocolVersion, capabilities, clientInfo."""
    if type(params) is not dict:
        return _PARAMS, "Invalid params: initialize needs params"
    if type(params.get("protocolVersion")) is not str:
        return _PARAMS, "Invalid params: initialize needs protocolVersion (a string)"
    if type(params.get("capabilities")) is not dict:
        return _PARAMS, "Invalid params: initialize needs capabilities (an object)"
    if type(params.get("clientInfo")) is not dict:
        return _PARAMS, "Invalid params: initialize needs clientInfo (an object)"
    return None


def sampling_fault(
    spec: VersionSpec, params: Any, caps: Mapping[str, Any], *, strict: bool = True
) -> Fault | None:
    """Sampling with tools needs ``sampling.tools`` (2025-11-25 on: "The client MUST return
    an error if this field is provided but ClientCapabilities.sampling.tools is not
    declared", Schema > CreateMessageRequestParams, of ``tools`` and of ``toolChoice``).
    With ``strict``, sampling with context needs ``sampling.context`` too: the text asks
    that only of the server ("If not declared, servers SHOULD only use ``includeContext:
    "none"`` (or omit it)", Schema > ClientCapabilities), and of the request it says "The
    client MAY ignore this request" (Schema > CreateMessageRequestParams), so a client
    receiving one may serve it: the Connection checks it on what it sends, and on what it
    receives only under ``Config.strict``."""
    if not spec.sampling_tools:
        return None
    if ("tools" in params or "toolChoice" in params) and not capability_met(
        caps, ("sampling", "tools")
    ):
        return _PARAMS, "Invalid params: sampling with tools needs the capability sampling.tools"
    if (
        strict
        and params.get("includeContext", "none") != "none"
        and not capability_met(caps, ("sampling", "context"))
    ):
        return _PARAMS, "Invalid params: includeContext needs the capability sampling.context"
    return None


def elicitation_fault(spec: VersionSpec, params: Any, caps: Mapping[str, Any]) -> Fault | None:
    """Elicitation modes (2025-11-25 on): ``form`` needs ``elicitation.form`` or an empty
    ``elicitation`` object, ``url`` needs ``elicitation.url``."""
    if not spec.elicitation_modes:
        return None
    elicitation = caps.get("elicitation")
    if not isinstance(elicitation, Mapping):
        return _PARAMS, "Invalid params: the client did not declare elicitation"
    mode = params.get("mode", "form")
    if mode == "url":
        if "url" not in elicitation:
            return _PARAMS, "Invalid params: URL-mode elicitation needs elicitation.url"
    elif mode == "form":
        if elicitation and "form" not in elicitation:
            return _PARAMS, "Invalid params: form-mode elicitation needs elicitation.form"
    else:
        return _PARAMS, f"Invalid params: unknown elicitation mode {mode!r}"
    return None


def listen_params_fault(params: Any) -> Fault | None:
    """The shape of ``subscriptions/listen`` params (2026-07-28)."""
    wanted = params["notifications"]
    subs = wanted.get("resourceSubscriptions")
    if subs is not None and (type(subs) is not list or any(type(u) is not str for u in subs)):
        return _PARAMS, "Invalid params: resourceSubscriptions must be a list of strings"
    return None


def progress_params_fault(
    spec: VersionSpec | None, params: Any, *, strict: bool = True
) -> Fault | None:
    """The shape of ``notifications/progress`` params. ``message`` exists from 2025-03-26;
    in 2024-11-05 the schema does not forbid it (its params allow further properties), so
    a received one is refused only with ``strict`` (what we send is always checked)."""
    if type(params) is not dict:
        return _PARAMS, "Invalid params: notifications/progress needs params"
    if not is_id(params.get("progressToken")):
        return _PARAMS, "Invalid params: progressToken must be a string or an integer"
    if not is_number(params.get("progress")):
        return _PARAMS, "Invalid params: progress must be a number"
    total = params.get("total")
    if total is not None and not is_number(total):
        return _PARAMS, "Invalid params: total must be a number"
    if "message" in params:
        if spec is not None and not spec.progress_message:
            if strict:
                return _PARAMS, f"Invalid params: progress has no message in {spec.version}"
        elif type(params["message"]) is not str:
            return _PARAMS, "Invalid params: message must be a string"
    return None


#: The versions whose text says "Both parties SHOULD: … Only use capabilities that were
#: successfully negotiated" (Basic > Lifecycle > Operation); from 2025-06-18 it says MUST.
#: (Derived from :attr:`VersionSpec.negotiated_only_should`, which the code reads.)
NEGOTIATED_ONLY_SHOULD: Final = frozenset(
    v for v, spec in VERSIONS.items() if spec.negotiated_only_should
)


def undeclared_is_soft(spec: VersionSpec, gate: tuple[str, ...], caps: Mapping[str, Any]) -> bool:
    """Whether a notification whose sender did not declare its ``gate`` breaks only a
    SHOULD: in the versions of :data:`NEGOTIATED_ONLY_SHOULD`, when the sender declared the
    feature (the gate's first key) and lacks only the sub-capability (``listChanged``,
    ``subscribe``). Declaring the feature itself is a MUST in every version ("Servers that
    support tools MUST declare the tools capability", likewise prompts, resources and the
    client's roots; "Servers that emit log message notifications MUST declare the logging
    capability")."""
    return spec.negotiated_only_should and len(gate) > 1 and capability_met(caps, gate[:1])


_INPUT_CAPABILITY: Final = {
    ELICITATION_CREATE: "elicitation",
    SAMPLING_CREATE_MESSAGE: "sampling",
    ROOTS_LIST: "roots",
}


def input_required_fault(
    spec: VersionSpec,
    method: str,
    result: Mapping[str, Any],
    caps: Mapping[str, Any],
    *,
    strict: bool = True,
) -> Fault | None:
    """An ``input_required`` result (2026-07-28): only for the methods that allow it; at
    least one of ``inputRequests`` (an object of known input requests, each for a client
    capability in ``caps``, the request's) and ``requestState`` (a string). ``strict`` is
    passed on to :func:`sampling_fault`."""
    rule = spec.methods.get(method)
    if rule is None or not rule.input_required:
        return ErrorCode.INVALID_REQUEST, f"{method} cannot answer input_required"
    if "inputRequests" not in result and "requestState" not in result:
        return ErrorCode.INVALID_REQUEST, "input_required needs inputRequests or requestState"
    if "requestState" in result and type(result["requestState"]) is not str:
        return ErrorCode.INVALID_REQUEST, "requestState must be a string"
    requests = result.get("inputRequests")
    if requests is None:
        return None
    if type(requests) is not dict:
        return ErrorCode.INVALID_REQUEST, "inputRequests must be an object"
    for key, item in requests.items():
        inner = item.get("method") if type(item) is dict else None
        capability = _INPUT_CAPABILITY.get(inner) if type(inner) is str else None
        if capability is None:
            return ErrorCode.INVALID_REQUEST, f"inputRequests[{key!r}] has no known method"
        if capability not in caps:
            return ErrorCode.MISSING_REQUIRED_CLIENT_CAPABILITY, (
                f"inputRequests[{key!r}] asks for {inner}, but the request did not declare "
                f"the client capability {capability!r}"
            )
        if inner == ELICITATION_CREATE:
            fault = elicitation_fault(spec, item.get("params"), caps)
        elif inner == SAMPLING_CREATE_MESSAGE:
            fault = sampling_fault(spec, item.get("params"), caps, strict=strict)
        else:
            fault = None
        if fault is not None:
            return fault
    return None


# Each kind of a required param: its words, and the exact types of its decoded values
# (``None``: any value). A float must also be finite (see is_number).
_KINDS: Final[Mapping[str, tuple[str, tuple[type, ...] | None]]] = {
    "string": ("a string", (str,)),
    "integer": ("an integer", (int,)),
    "number": ("a number", (int, float)),
    "object": ("an object", (dict,)),
    "array": ("an array", (list,)),
    "boolean": ("a boolean", (bool,)),
    "id": ("a string or an integer", (str, int)),
    "any": ("any JSON value", None),
}


def _json(value: Any) -> str:
    """The JSON type of a decoded value, for messages (never the value: it may be large)."""
    if value is None:
        return "null"
    names = {bool: "a boolean", str: "a string", dict: "an object", list: "an array"}
    return names.get(type(value), "a number")


def required_params_fault(method: str, rows: tuple[Required, ...], params: Any) -> Fault | None:
    """The params the schema requires of ``method`` (``rows``, from
    :attr:`VersionSpec.required_params`): present, of their JSON type, and one of their
    values where the schema lists them."""
    if type(params) is not dict:
        return _PARAMS, f"Invalid params: {method} needs params"
    for key, kind, enum in rows:
        if key not in params:
            return _PARAMS, f"Invalid params: {method} needs {key!r}"
        value = params[key]
        what, types = _KINDS[kind]
        cls = type(value)
        if types is not None and (cls not in types or (cls is float and not math.isfinite(value))):
            return _PARAMS, f"Invalid params: {method}: {key!r} must be {what}, not {_json(value)}"
        if enum is not None and value not in enum:
            return _PARAMS, f"Invalid params: {method}: {key!r} must be one of {list(enum)}"
    return None
