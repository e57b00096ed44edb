"""What a request must be for a Streamable HTTP server to serve it, sans-IO: the checks of
its head (``Host`` and ``Origin`` against the DNS-rebinding allow-lists, ``Accept``,
``Content-Type``, ``Content-Length`` against the body limit) and of its first message
(which era it is of, whether it may open an initialize-era session, whether a 2026-07-28
request's standard headers match its body, whether an ``MCP-Protocol-Version`` is served).

Each check returns what is wrong (``None``: nothing), for
:class:`~mcp_sansio.http.HttpServer` to answer; none keeps state, and none decides by era
except through the version's record (:attr:`~mcp_sansio._versions.EraPolicy.session_header`).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from typing import Any, Final
from urllib.parse import urlsplit

from .._versions import VERSIONS
from ._headers import ACCEPT, CONTENT_TYPE, PROTOCOL_VERSION, check_standard_headers
from ._sessions import _JSON, _SSE

__all__ = [
    "accepts",
    "host_name",
    "initialize_problem",
    "origin_problem",
    "post_head_problem",
    "session_less",
    "stateless_header_problem",
    "version_header_problem",
]

# A Content-Length: ASCII digits only (str.isdigit() takes "²", which int() refuses).
_DIGITS: Final = re.compile(r"[0-9]+")
_META: Final = "_meta"
_META_VERSION: Final = "io.modelcontextprotocol/protocolVersion"


def host_name(host: str) -> str:
    """``host[:port]`` → ``host`` (an IPv6 literal keeps its brackets)."""
    host = host.strip().lower()
    if host.startswith("["):
        end = host.find("]")
        return host[: end + 1] if end != -1 else host
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


def accepts(accept: str, media: str) -> bool:
    """Whether an ``Accept`` value takes ``media`` (itself, ``*/*`` or its ``type/*``)."""
    major = media.split("/")[0]
    for item in accept.split(","):
        kind = item.split(";")[0].strip().lower()
        if kind in (media, "*/*", f"{major}/*"):
            return True
    return False


def origin_problem(
    h: Mapping[str, str],
    allowed_hosts: Collection[str] | None,
    allowed_origins: Collection[str] | None,
) -> tuple[int, str] | None:
    """421 for a ``Host`` not allowed, 403 for an ``Origin`` not allowed (DNS-rebinding
    protection); ``None`` for a list that is ``None`` (the check is off)."""
    if allowed_hosts is not None:
        host = host_name(h.get("host", ""))
        if host not in allowed_hosts:
            return 421, f"the Host {h.get('host', '')!r} is not allowed"
    origin = h.get("origin")
    if origin is not None and allowed_origins is not None:
        parts = urlsplit(origin)
        if parts.scheme not in ("http", "https") or host_name(parts.netloc) not in (
            allowed_origins
        ):
            return 403, f"the Origin {origin!r} is not allowed"
    return None


def post_head_problem(h: Mapping[str, str], max_body_size: int) -> tuple[int, str] | None:
    """What is wrong with a POST's head: 406 (``Accept`` must list both media types), 415
    (the body must be JSON), 413 (a ``Content-Length`` over ``max_body_size``)."""
    if not accepts(h.get(ACCEPT, ""), _JSON) or not accepts(h.get(ACCEPT, ""), _SSE):
        return 406, "Accept must list both application/json and text/event-stream"
    kind = h.get(CONTENT_TYPE, "").split(";")[0].strip().lower()
    if kind != _JSON:
        return 415, "the Content-Type must be application/json"
    length = (h.get("content-length") or "").strip()
    # More digits than the limit has is larger (and int() takes no more than 4,300).
    digits = length.lstrip("0") or "0"
    if _DIGITS.fullmatch(length) and (
        len(digits) > len(str(max_body_size)) or int(digits) > max_body_size
    ):
        return 413, f"the body is larger than {max_body_size} bytes"
    return None


def session_less(
    h: Mapping[str, str],
    first: Mapping[str, Any],
    session_versions: Collection[str],
    session_less_versions: Collection[str],
) -> bool | None:
    """Whether a POST without a session id is of a version without sessions (2026-07-28:
    each POST its own session); ``False`` for an ``initialize`` that opens one; ``None``
    for another message of a version with sessions, which needs one.
    ``session_versions`` and ``session_less_versions`` are the versions served of each
    kind (:attr:`~mcp_sansio._versions.EraPolicy.session_header`)."""
    if not session_less_versions:
        return False if first.get("method") == "initialize" else None
    if not session_versions:
        return True
    header = h.get(PROTOCOL_VERSION, "").strip()
    spec = VERSIONS.get(header)
    if spec is not None and not spec.policy.session_header:
        return True
    params = first.get("params")
    meta = params.get(_META) if isinstance(params, Mapping) else None
    if isinstance(meta, Mapping) and _META_VERSION in meta:
        return True
    if first.get("method") == "initialize":
        return False
    return None if spec is not None else True


def initialize_problem(message: Any) -> str | None:
    """Why a POST that would open an initialize-era session cannot (``None``: it can): it
    must be one ``initialize`` request, with an id."""
    if isinstance(message, list):
        # 2025-03-26, Lifecycle: "The initialize request MUST NOT be part of a JSON-RPC
        # batch" (and later versions have no batches).
        return "the initialize request must not be part of a JSON-RPC batch"
    rid = message.get("id")
    if not isinstance(rid, (str, int)) or isinstance(rid, bool):
        # JSON-RPC 2.0: a request has an id, a string or a number; without one it is a
        # notification, which opens nothing.
        return "initialize must be a request, with a string or integer id"
    return None


def stateless_header_problem(
    h: Mapping[str, str], message: Mapping[str, Any], tool_headers: dict[str, str] | None
) -> str | None:
    """What is wrong with the standard headers of a 2026-07-28 request (the
    ``MCP-Protocol-Version`` against its ``_meta`` version, ``Mcp-Method``, ``Mcp-Name``,
    ``Mcp-Param-*`` against ``tool_headers``, the called tool's annotations)."""
    if "method" not in message:
        return None
    params = message.get("params")
    meta = params.get(_META) if isinstance(params, Mapping) else None
    version = meta.get(_META_VERSION) if isinstance(meta, Mapping) else None
    header = h.get(PROTOCOL_VERSION)
    if header is None:
        if version is not None:
            return "the MCP-Protocol-Version header is missing"
    elif version is not None and header.strip() != version:
        return (
            f"the MCP-Protocol-Version header {header.strip()!r} does not match the "
            f"request's protocol version {version!r}"
        )
    return check_standard_headers(h, message, tool_headers)


def version_header_problem(h: Mapping[str, str], served: Collection[str]) -> str | None:
    """What is wrong with the ``MCP-Protocol-Version`` of a request in a session: a version
    not ``served`` (absent: 2025-03-26 is assumed, as the spec says)."""
    header = h.get(PROTOCOL_VERSION)
    if header is None:
        return None
    header = header.strip()
    if header not in served:
        return f"unsupported MCP-Protocol-Version {header!r}"
    # The spec rejects only invalid or unsupported values: a supported version other
    # than the negotiated one passes (the 0.1.16 conformance suite sends 2025-03-26 on
    # a 2025-11-25 session).
    return None
