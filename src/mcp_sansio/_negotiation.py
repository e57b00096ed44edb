"""Opening a session: the checks of ``initialize`` and ``server/discover`` and of a 2026-07-28
request's ``_meta``, and the choice of era and version (after wsproto, whose handshake is
apart from its connection).

A client of both eras probes with ``server/discover``: a discover result, or a -32022
error listing versions it speaks, makes the session stateless; any other error (or the
adapter's timeout, :meth:`Connection.fall_back_to_initialize`) makes it an initialize-era
session. A server of both eras decides on the first request. The lifecycle moves (h11's
``ConnectionState``) live in :mod:`mcp_sansio._state`; this module holds the content rules and
the choices, and :class:`~mcp_sansio.Connection` applies them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from ._checks import LOG_RANK, input_required_fault
from ._config import Config
from ._errors import ErrorCode, LocalProtocolError, RemoteProtocolError
from ._events import ErrorResponse, Event, InputRequired, InvalidMessage, Request, Response
from ._gates import compute_gates, refresh, transition
from ._names import (
    INITIALIZE,
    META_CAPABILITIES,
    META_CLIENT_INFO,
    META_LOG_LEVEL,
    META_SERVER_INFO,
    META_VERSION,
    PING,
    SERVER_DISCOVER,
)
from ._requests import Pending, Session
from ._state import Role, State, Trigger
from ._versions import POLICIES, Era, EraPolicy, VersionSpec

__all__ = [
    "answered_initialize",
    "answered_probe",
    "check_discover_result",
    "check_initialize_result",
    "choose_version",
    "client_trigger",
    "decide_legacy",
    "discover_result",
    "fill_meta",
    "looks_stateless",
    "enter_stateless",
    "opened",
    "opens_stateless",
    "refused_probe",
    "retry_params",
    "check_stateless_result",
    "sent_initialize",
    "start",
    "stateless_answer",
    "stateless_meta_fault",
]

_PARAMS: Final = ErrorCode.INVALID_PARAMS
_STATE_IDLE: Final = State.IDLE
_TRIGGER_PROBE: Final = Trigger.PROBE
_TRIGGER_STATELESS_REQUEST: Final = Trigger.STATELESS_REQUEST
_INITIALIZE_POLICY: Final = POLICIES[Era.INITIALIZE]

#: A refusal of a request: (code, message, data or None).
Refusal = tuple[int, str, Any]


def looks_stateless(params: Any) -> bool:
    """Whether request params carry the 2026-07-28 ``_meta`` protocol version."""
    meta = params.get("_meta") if params else None
    return type(meta) is dict and META_VERSION in meta


def opens_stateless(s: Session, req: Request) -> bool:
    """Whether a server takes the peer's request ``req`` as a 2026-07-28 request: always in
    the stateless era; in IDLE, a server of that era only, or of both when the request
    carries the 2026 ``_meta`` (and is not ``initialize`` or ``ping``)."""
    return s.policy.request_meta or (
        s.state is _STATE_IDLE
        and bool(s.modern)
        and (not s.legacy or (req.method not in (INITIALIZE, PING) and looks_stateless(req.params)))
    )


def stateless_meta_fault(s: Session, req: Request) -> Refusal | None:
    """A server's checks of one 2026-07-28 request's ``_meta`` (and of ``initialize``, which
    the era does not have)."""
    modern = s.modern
    params = req.params
    if req.method == INITIALIZE and not looks_stateless(params):
        # A legacy client's handshake (one carrying 2026 ``_meta`` asks for a method that
        # no longer exists: -32601 later).
        requested = params.get("protocolVersion") if params else None
        return (
            _PARAMS,
            f"Unsupported protocol version: this server speaks {', '.join(modern)}, "
            "which have no initialize",
            {"supported": list(modern), "requested": requested},
        )
    meta = params.get("_meta") if params else None
    if type(meta) is not dict:
        return _PARAMS, "Invalid params: params._meta is required on every request", None
    version = meta.get(META_VERSION)
    if type(version) is not str:
        return _PARAMS, f"Invalid params: _meta[{META_VERSION!r}] must be a string", None
    if version not in modern:
        return (
            ErrorCode.UNSUPPORTED_PROTOCOL_VERSION,
            f"Unsupported protocol version {version!r}",
            {"supported": list(modern), "requested": version},
        )
    if type(meta.get(META_CAPABILITIES)) is not dict:
        return _PARAMS, f"Invalid params: _meta[{META_CAPABILITIES!r}] must be an object", None
    info = meta.get(META_CLIENT_INFO)
    if info is not None and type(info) is not dict:
        return _PARAMS, f"Invalid params: _meta[{META_CLIENT_INFO!r}] must be an object", None
    level = meta.get(META_LOG_LEVEL)
    if level is not None and (type(level) is not str or level not in LOG_RANK):
        return _PARAMS, f"Invalid params: unknown logLevel {level!r}", None
    return None


def client_trigger(policy: EraPolicy, method: str) -> Trigger | None:
    """What a client's first request (in IDLE, not ``ping``) does to the lifecycle: the probe,
    the first stateless request, or nothing (``initialize`` moves it by itself)."""
    if policy.probe:
        if method == SERVER_DISCOVER:
            return _TRIGGER_PROBE
        if method != INITIALIZE:
            raise LocalProtocolError(
                "this client speaks both eras: send server/discover (or initialize) first"
            )
        return None
    if policy.request_meta:
        return _TRIGGER_STATELESS_REQUEST
    return None


def fill_meta(params: dict[str, Any] | None, version: str, cfg: Config) -> dict[str, Any]:
    """A stateless client's request params, with the required ``_meta`` keys filled."""
    params = dict(params) if params else {}
    filled = {
        META_VERSION: version,
        META_CAPABILITIES: dict(cfg.capabilities),
        META_CLIENT_INFO: dict(cfg.implementation),
    }
    if "_meta" not in params:  # the common case: nothing of the application's to check
        params["_meta"] = filled
        return params
    meta = params["_meta"]
    if not isinstance(meta, Mapping):
        raise LocalProtocolError("_meta must be an object", _PARAMS)
    meta = dict(meta)
    for key, value in filled.items():  # (after the application's keys, as they came)
        meta.setdefault(key, value)
    given = meta[META_VERSION]
    if type(given) is not str or given != version:  # (a bytes value must not compare)
        raise LocalProtocolError(
            f"_meta protocolVersion {given!r} differs from the session's {version!r}"
        )
    # What the application put there itself must be what every server accepts.
    if type(meta[META_CAPABILITIES]) is not dict:
        raise LocalProtocolError(f"_meta[{META_CAPABILITIES!r}] must be an object", _PARAMS)
    if type(meta[META_CLIENT_INFO]) is not dict:
        raise LocalProtocolError(f"_meta[{META_CLIENT_INFO!r}] must be an object", _PARAMS)
    level = meta.get(META_LOG_LEVEL)
    if level is not None and (type(level) is not str or level not in LOG_RANK):
        raise LocalProtocolError(f"unknown logLevel {level!r}", _PARAMS)
    params["_meta"] = meta
    return params


def check_discover_result(s: Session, result: Mapping[str, Any]) -> None:
    """A server's ``server/discover`` result must describe this server."""
    supported = result.get("supportedVersions")
    modern = s.modern
    if type(supported) is not list or not supported or any(v not in modern for v in supported):
        raise LocalProtocolError(
            f"supportedVersions must list versions this server speaks statelessly "
            f"({', '.join(modern)}), not {supported!r}"
        )
    if result.get("capabilities") != s.config.capabilities:
        raise LocalProtocolError(
            "the discover result's capabilities must be this server's configured ones"
        )
    ttl = result.get("ttlMs")
    if type(ttl) is not int or ttl < 0:
        raise LocalProtocolError("the discover result needs ttlMs (an integer >= 0)")
    if result.get("cacheScope") not in ("public", "private"):
        raise LocalProtocolError('the discover result needs cacheScope "public" or "private"')


def discover_result(
    s: Session, ttl_ms: int, cache_scope: str, instructions: str | None
) -> dict[str, Any]:
    """The ``server/discover`` result that describes this server."""
    cfg = s.config
    result: dict[str, Any] = {
        "resultType": "complete",
        "supportedVersions": list(s.modern),
        "capabilities": dict(cfg.capabilities),
        "ttlMs": ttl_ms,
        "cacheScope": cache_scope,
        "_meta": {META_SERVER_INFO: dict(cfg.implementation)},
    }
    if instructions is not None:
        result["instructions"] = instructions
    return result


def check_initialize_result(s: Session, result: Mapping[str, Any]) -> None:
    """The ``initialize`` result a server sends: complete, and the version it must choose."""
    version = result.get("protocolVersion")
    if type(version) is not str:
        raise LocalProtocolError("the initialize result needs protocolVersion (a string)")
    if type(result.get("capabilities")) is not dict:
        raise LocalProtocolError("the initialize result needs capabilities (an object)")
    if type(result.get("serverInfo")) is not dict:
        raise LocalProtocolError("the initialize result needs serverInfo (an object)")
    requested = s.requested_version
    legacy = s.legacy
    if requested in legacy and version != requested:
        raise LocalProtocolError(
            f"the client asked for {requested!r}, which this server supports: "
            f"the result must echo it, not {version!r}"
        )
    if version not in legacy:
        raise LocalProtocolError(f"protocolVersion {version!r} is not one this server speaks")


def initialize_result_fault(s: Session, result: Mapping[str, Any]) -> tuple[str, int] | None:
    """What breaks the session in the ``initialize`` result a client receives."""
    version = result.get("protocolVersion")
    if version not in s.legacy:
        return (
            f"the server chose protocol version {version!r}, which this client does not "
            f"speak ({', '.join(s.legacy)}): disconnect",
            _PARAMS,
        )
    if type(result.get("capabilities")) is not dict or type(result.get("serverInfo")) is not dict:
        return "the initialize result lacks capabilities or serverInfo", _PARAMS
    return None


def choose_version(mine: tuple[str, ...], supported: Any) -> str | None:
    """The newest of ``mine`` that the server's ``supported`` list names, or ``None``."""
    if not isinstance(supported, list):
        return None
    for version in mine:
        if version in supported:
            return version
    return None


# ---------------------------------------------------------------- the lifecycle moves


def start(s: Session) -> None:
    """A new session: the configured versions of each era, our own capabilities, and the
    era when we speak only one (else ``UNDECIDED`` until the first exchange)."""
    cfg = s.config
    s.known = frozenset(m for v in cfg.versions for m in s.specs[v].methods)
    s.legacy = cfg.versions_of(Era.INITIALIZE)
    s.modern = cfg.versions_of(Era.STATELESS)
    if s.role is Role.SERVER:
        s.server_caps = cfg.capabilities
    else:
        s.client_caps = cfg.capabilities
    if not s.legacy:
        s.policy = POLICIES[Era.STATELESS]
        s.spec = s.specs[s.modern[0]]
    elif not s.modern:
        s.policy = _INITIALIZE_POLICY
    refresh(s)


def set_spec(s: Session, spec: VersionSpec) -> None:
    """The version is chosen: its record, its era's policy."""
    s.spec = spec
    s.policy = spec.policy
    s.batches = spec.batches


def sent_initialize(s: Session, params: Any) -> None:
    """``initialize`` went out or came in: the era is the initialize era."""
    s.requested_version = params["protocolVersion"]
    s.client_caps = params["capabilities"]
    s.policy = _INITIALIZE_POLICY
    transition(s, Trigger.INITIALIZE)


def answered_initialize(s: Session, result: Mapping[str, Any], *, sent: bool) -> None:
    """The ``initialize`` result went out (``sent``) or came in. Raises
    :class:`RemoteProtocolError` for a received result that breaks the session."""
    if not sent:
        fault = initialize_result_fault(s, result)
        if fault is not None:
            raise RemoteProtocolError(*fault)
    version = result["protocolVersion"]
    caps = result["capabilities"]
    assert isinstance(version, str)
    assert isinstance(caps, dict)
    set_spec(s, s.specs[version])
    s.server_caps = caps
    compute_gates(s)
    transition(s, Trigger.INITIALIZE_RESULT)


def enter_stateless(s: Session, spec: VersionSpec) -> None:
    """The first 2026-07-28 request went out or came in."""
    set_spec(s, spec)
    compute_gates(s)
    transition(s, _TRIGGER_STATELESS_REQUEST)


def opened(s: Session, entry: Pending, trigger: Trigger | None) -> None:
    """Our request moves the lifecycle: ``initialize``, the probe, or the first stateless
    request."""
    if entry.method == INITIALIZE:
        sent_initialize(s, entry.params)
    elif trigger is _TRIGGER_PROBE:
        s.probe_id = entry.id
        transition(s, _TRIGGER_PROBE)
    elif trigger is _TRIGGER_STATELESS_REQUEST:
        enter_stateless(s, s.spec or s.specs[s.modern[0]])


def answered_probe(s: Session, result: Mapping[str, Any]) -> None:
    """The ``server/discover`` result: the stateless era, at the newest common version.
    Raises :class:`RemoteProtocolError` when it lacks what it must carry or names no
    version this client speaks."""
    s.probe_id = None
    supported = result.get("supportedVersions")
    caps = result.get("capabilities")
    if type(supported) is not list or type(caps) is not dict:
        raise RemoteProtocolError(
            "the server/discover result lacks supportedVersions or capabilities",
            ErrorCode.INVALID_REQUEST,
        )
    s.server_caps = caps
    _choose_modern(s, supported)


def refused_probe(s: Session, error: ErrorResponse) -> None:
    """An error to the probe: -32022 with versions this client speaks chooses the stateless
    era; any other error, the initialize era."""
    s.probe_id = None
    if error.code == ErrorCode.UNSUPPORTED_PROTOCOL_VERSION and isinstance(error.data, dict):
        _choose_modern(s, error.data.get("supported"))
    else:
        decide_legacy(s)


def _choose_modern(s: Session, supported: Any) -> None:
    mine = s.modern
    version = choose_version(mine, supported)
    if version is None:
        raise RemoteProtocolError(
            f"the server supports {supported!r}; this client speaks none of them ({mine})",
            ErrorCode.UNSUPPORTED_PROTOCOL_VERSION,
        )
    set_spec(s, s.specs[version])
    compute_gates(s)
    transition(s, Trigger.PROBE_MODERN)


def decide_legacy(s: Session) -> None:
    """The probe failed or was given up: the initialize era."""
    assert s.legacy, "only a client of both eras probes"
    s.policy = _INITIALIZE_POLICY
    transition(s, Trigger.PROBE_LEGACY)


# ---------------------------------------------------------------- 2026-07-28 answers


def check_stateless_result(s: Session, pending: Pending, result: Mapping[str, Any]) -> None:
    """A 2026-07-28 result a server sends (``resultType`` filled): ``input_required`` only
    where the method allows it and for the capabilities the request declared; a discover
    result that describes this server."""
    result_type = result["resultType"]
    if type(result_type) is not str:  # bytes would compare with a BytesWarning under -b
        raise LocalProtocolError(f"unknown resultType {result_type!r}: it must be a string")
    if result_type == "input_required":
        assert s.spec is not None
        fault = input_required_fault(s.spec, pending.method, result, pending.caps or {})
        if fault is not None:
            raise LocalProtocolError(fault[1], fault[0])
    elif result_type != "complete":
        raise LocalProtocolError(f"unknown resultType {result_type!r}")
    if pending.method == SERVER_DISCOVER:
        check_discover_result(s, result)


def stateless_answer(s: Session, msg: Response, pending: Pending) -> Event:
    """A 2026-07-28 result a client receives: complete (a discover result teaches a
    stateless-only client the server's capabilities), or ``input_required`` checked against
    the request (an :class:`InputRequired` event)."""
    result = msg.result
    rid = msg.id
    result_type = result.get("resultType", "complete")
    if result_type == "complete":
        if pending.method == SERVER_DISCOVER and type(result.get("capabilities")) is dict:
            s.server_caps = result["capabilities"]
            compute_gates(s)
            refresh(s)
        return msg
    if result_type != "input_required":
        return InvalidMessage(
            code=ErrorCode.INVALID_REQUEST,
            message=f"Invalid response: unknown resultType {result_type!r}",
            reply=None,
            id=rid,
        )
    method, params = pending.method, pending.params
    assert s.spec is not None
    meta = params.get("_meta") if params else None
    caps = meta.get(META_CAPABILITIES) if type(meta) is dict else None
    fault = input_required_fault(s.spec, method, result, caps or {}, strict=s.config.strict)
    if fault is not None:
        return InvalidMessage(
            code=ErrorCode.INVALID_REQUEST,
            message=f"Invalid response: {fault[1]}",
            reply=None,
            id=rid,
        )
    return InputRequired(
        id=rid, result=result, request=Request(id=rid, method=method, params=params)
    )


def retry_params(event: InputRequired, input_responses: Mapping[str, Any]) -> dict[str, Any]:
    """The params of the retry of an ``input_required`` answer: the original params,
    ``inputResponses`` under the server's keys, and ``requestState`` echoed exactly.
    Raises :class:`LocalProtocolError` when an answer's key was not asked for."""
    extra = set(input_responses) - set(event.input_requests)
    if extra:
        raise LocalProtocolError(f"inputResponses for keys that were not asked: {sorted(extra)}")
    params = dict(event.request.params or {})
    params.pop("inputResponses", None)
    params.pop("requestState", None)
    if input_responses:
        params["inputResponses"] = dict(input_responses)
    if event.request_state is not None:
        params["requestState"] = event.request_state
    return params
