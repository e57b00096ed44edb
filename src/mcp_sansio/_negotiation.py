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

from ._checks import LOG_RANK
from ._config import Config
from ._errors import ErrorCode, LocalProtocolError
from ._events import Request
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
from ._requests import Session
from ._state import State, Trigger
from ._versions import EraPolicy

__all__ = [
    "check_discover_result",
    "check_initialize_result",
    "choose_version",
    "client_trigger",
    "discover_result",
    "fill_meta",
    "looks_stateless",
    "opens_stateless",
    "stateless_meta_fault",
]

_PARAMS: Final = ErrorCode.INVALID_PARAMS
_STATE_IDLE: Final = State.IDLE
_TRIGGER_PROBE: Final = Trigger.PROBE
_TRIGGER_STATELESS_REQUEST: Final = Trigger.STATELESS_REQUEST

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
