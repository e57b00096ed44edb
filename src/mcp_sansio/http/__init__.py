"""Streamable HTTP, sans-IO: the MCP transport over HTTP, for both eras.

:class:`HttpServer` turns HTTP requests (method, target, headers, body) into work for
:class:`~mcp_sansio.session.ServerSession` s and their writes into HTTP responses;
the functions of the 2026-07-28 standard headers (``Mcp-Method``, ``Mcp-Name``,
``Mcp-Param-*``) are here too. The bindings on h11
(``mcp_sansio.asyncio.serve_http`` and its blocking and trio siblings) and the ASGI
application only move bytes. Importing this package needs nothing beyond the core; the
bindings need the ``http`` extra (h11).
"""

from ._headers import (
    check_standard_headers,
    decode_value,
    encode_value,
    header_params,
    render_value,
    standard_headers,
)
from ._server import (
    DEFAULT_ALLOWED_HOSTS,
    DEFAULT_IDLE_TIMEOUT,
    DEFAULT_KEEPALIVE,
    DEFAULT_MAX_SESSIONS,
    DEFAULT_REPLAY_BYTES,
    DEFAULT_REPLAY_SIZE,
    DEFAULT_RETRY,
    END,
    REPLAY_EVENT_COST,
    REPLAY_STREAM_COST,
    Deliver,
    Exchange,
    HttpServer,
    HttpSession,
    ResponseHead,
    Terminate,
    Wake,
    Work,
    wake,
)

__all__ = [
    "DEFAULT_ALLOWED_HOSTS",
    "DEFAULT_IDLE_TIMEOUT",
    "DEFAULT_KEEPALIVE",
    "DEFAULT_MAX_SESSIONS",
    "DEFAULT_REPLAY_BYTES",
    "DEFAULT_REPLAY_SIZE",
    "DEFAULT_RETRY",
    "END",
    "REPLAY_EVENT_COST",
    "REPLAY_STREAM_COST",
    "Deliver",
    "Exchange",
    "HttpServer",
    "HttpSession",
    "ResponseHead",
    "Terminate",
    "Wake",
    "Work",
    "check_standard_headers",
    "decode_value",
    "encode_value",
    "header_params",
    "render_value",
    "standard_headers",
    "wake",
]
