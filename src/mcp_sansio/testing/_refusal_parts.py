"""The parts the table of refusals is made of: raw messages as a peer writes them, the
codes, the capabilities and lead-ups the examples share, and the sentences the refusals
cite that no probe rule cites (quoted from the text of the versions named).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, Final

from mcp_sansio._state import Role
from mcp_sansio.testing._refusal_model import Step
from mcp_sansio.testing._rule_parts import INITIALIZATION, LEGACY, V, mcp

__all__ = [
    "input_sampling",
    "INCLUDE_CONTEXT_2026",
    "SAMPLING_TOOLS_2026",
    "PING_WITH_TOKEN",
    "ACK_SUBSET",
    "C",
    "CALL",
    "ERRORS_CODE_MESSAGE",
    "INITIALIZED_ONCE",
    "INITIALIZE_NOT_BATCHED",
    "INVALID",
    "LOGGING_DECLARED",
    "LOG_AT_OR_ABOVE",
    "LOG_LEVEL_REJECT",
    "M",
    "NOT_FOUND",
    "NO_LOG_WITHOUT_LEVEL",
    "PARAMS",
    "PARSE",
    "S",
    "SAMPLING",
    "SET_LEVEL_SHOULD",
    "SUBSCRIBE",
    "TOKEN_TYPE",
    "TOKEN_UNIQUE",
    "TOOLS",
    "TOOLS_DECLARED",
    "WITH_TOKEN",
    "ack",
    "acked",
    "init_request",
    "listen",
    "note",
    "progress",
    "request",
    "result",
]

C: Final = Role.CLIENT
S: Final = Role.SERVER
PARSE: Final = -32700
INVALID: Final = -32600
NOT_FOUND: Final = -32601
PARAMS: Final = -32602
M: Final = "2026-07-28"


def request(rid: Any, method: str, params: Any = None) -> dict[str, Any]:
    """A request as a raw peer writes it."""
    out: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
    if params is not None:
        out["params"] = params
    return out


def note(method: str, params: Any = None) -> dict[str, Any]:
    """A notification as a raw peer writes it."""
    out: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        out["params"] = params
    return out


def init_request(version: str, rid: Any = 9, **params: Any) -> dict[str, Any]:
    """An ``initialize`` request of ``version`` (a ``None`` param: left out)."""
    base = {
        "protocolVersion": version,
        "capabilities": {},
        "clientInfo": {"name": "x", "version": "1"},
    }
    base.update(params)
    return request(rid, "initialize", {k: v for k, v in base.items() if v is not None})


# New sentences (not cited by a probe rule).
ERRORS_CODE_MESSAGE: Final = mcp(
    ("2025-06-18", "2025-03-26"),
    "Basic > Overview > Messages > Responses",
    "Results MAY follow any JSON object structure, while errors MUST include an error code "
    "and message at minimum.",
)
INITIALIZE_NOT_BATCHED: Final = mcp(
    ("2025-03-26",),
    INITIALIZATION,
    "The `initialize` request MUST NOT be part of a JSON-RPC batch, as other requests and "
    "notifications are not possible until initialization has completed.",
)
INITIALIZED_ONCE: Final = mcp(
    LEGACY,
    INITIALIZATION,
    "After successful initialization, the client MUST send an `initialized` notification to "
    "indicate it is ready to begin normal operations:",
)
TOOLS_DECLARED: Final = mcp(
    V,
    "Server Features > Tools > Capabilities",
    "Servers that support tools MUST declare the `tools` capability:",
)
LOGGING_DECLARED: Final = mcp(
    V,
    "Server Features > Utilities > Logging > Capabilities",
    "Servers that emit log message notifications MUST declare the `logging` capability:",
)

SAMPLING_TOOLS_2026: Final = mcp(
    ("2026-07-28",),
    "Schema > CreateMessageRequestParams",
    "The client MUST return an error if this field is provided but "
    "ClientCapabilities.sampling.tools is not declared.",
)
INCLUDE_CONTEXT_2026: Final = mcp(
    ("2026-07-28",),
    "Schema > ClientCapabilities",
    'If not declared, servers SHOULD only use `includeContext: "none"` (or omit it).',
)

#: Capabilities the examples declare.
TOOLS: Final[Mapping[str, Any]] = MappingProxyType({"tools": {}})

_PROGRESS: Final = "Basic > Utilities > Progress > Progress Flow"
_PROGRESS_2026: Final = "Basic > Patterns > Progress > Progress Flow"
_LOGGING_2026: Final = "Server Features > Utilities > Logging"

TOKEN_TYPE: Final = (
    mcp((M,), _PROGRESS_2026, "Progress tokens MUST be a string or integer value"),
    mcp(LEGACY, _PROGRESS, "Progress tokens MUST be a string or integer value"),
)
TOKEN_UNIQUE: Final = (
    mcp(
        (M,),
        _PROGRESS_2026,
        "Progress tokens can be chosen by the client using any means, but MUST be unique "
        "across all active requests.",
    ),
    mcp(
        LEGACY,
        _PROGRESS,
        "Progress tokens can be chosen by the sender using any means, but MUST be unique "
        "across all active requests.",
    ),
)
SET_LEVEL_SHOULD: Final = mcp(
    LEGACY,
    "Schema > SetLevelRequest",
    "The server should send all logs at this level and higher (i.e., more severe) to the "
    "client as notifications/message.",
)
NO_LOG_WITHOUT_LEVEL: Final = mcp(
    (M,),
    _LOGGING_2026 + " > Requesting Log Messages > Per-request log level",
    "The server MUST NOT emit `notifications/message` for a request that does not include "
    "this field.",
)
LOG_AT_OR_ABOVE: Final = mcp(
    (M,),
    _LOGGING_2026 + " > Requesting Log Messages > Per-request log level",
    "When the field is present, the server MAY send `notifications/message` notifications "
    "at or above the requested level on the response stream of that request, before the "
    "final response.",
)
LOG_LEVEL_REJECT: Final = mcp(
    (M,),
    _LOGGING_2026 + " > Error Handling",
    "If the `io.modelcontextprotocol/logLevel` value carried in a request's `_meta` is not a "
    "recognized log level, the server SHOULD reject that request with a standard JSON-RPC "
    "error: … Invalid log level: `-32602` (Invalid params)",
)
ACK_SUBSET: Final = mcp(
    (M,),
    "Basic > Patterns > Subscriptions > Acknowledgment",
    "The `notifications` field in the acknowledgment reflects the subset the server agreed "
    "to honor.",
)

SAMPLING: Final = {
    "messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}],
    "maxTokens": 8,
}
WITH_TOKEN: Final[tuple[Step, ...]] = (
    (C, {"id": "t1", "method": "tools/list", "params": {"_meta": {"progressToken": "t"}}}),
)
SUBSCRIBE: Final[Mapping[str, Any]] = MappingProxyType({"resources": {"subscribe": True}})


def progress(token: Any = "t", value: Any = 1, **more: Any) -> dict[str, Any]:
    """A progress notification."""
    return note("notifications/progress", {"progressToken": token, "progress": value, **more})


def listen(wanted: dict[str, Any], rid: str = "L") -> Step:
    """The client's ``subscriptions/listen`` step."""
    return (C, {"id": rid, "method": "subscriptions/listen", "params": {"notifications": wanted}})


def ack(sid: Any, granted: Any) -> dict[str, Any]:
    """An acknowledgement of the listen ``sid``."""
    return note(
        "notifications/subscriptions/acknowledged",
        {"notifications": granted, "_meta": {"io.modelcontextprotocol/subscriptionId": sid}},
    )


def acked(wanted: dict[str, Any]) -> tuple[Step, ...]:
    """A listen and its acknowledgement (all it asked for)."""
    message = ack("L", wanted)
    return (listen(wanted), (S, {"method": message["method"], "params": message["params"]}))


def input_sampling(**params: Any) -> dict[str, Any]:
    """A 2026-07-28 ``input_required`` result asking for one sampling with ``params``."""
    sampling = {"method": "sampling/createMessage", "params": {**SAMPLING, **params}}
    return {"resultType": "input_required", "inputRequests": {"s": sampling}}


def result(rid: Any, result: Any) -> dict[str, Any]:
    """A result as a raw peer writes it."""
    return {"jsonrpc": "2.0", "id": rid, "result": result}


#: A ping of ours whose progress token is ``"t"`` (initialize era).
PING_WITH_TOKEN: Final[tuple[Step, ...]] = (
    (C, {"id": "t1", "method": "ping", "params": {"_meta": {"progressToken": "t"}}}),
)
CALL: Final[tuple[Step, ...]] = ((C, {"id": "c", "method": "tools/call", "params": {"name": "t"}}),)
