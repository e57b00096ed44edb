"""The exception types of mcp-sansio and the JSON-RPC / MCP error codes.

Only these exceptions leave the core: :class:`LocalProtocolError` (raised by ``send()``;
the connection is unchanged), :class:`RemoteProtocolError` (raised by ``next_event()``;
the connection is then in its error state) and :class:`ValidationError` (raised when
typed structuring of a value fails).
"""

from __future__ import annotations

import enum

__all__ = [
    "ErrorCode",
    "LocalProtocolError",
    "ProtocolError",
    "RemoteProtocolError",
    "ValidationError",
]


class ErrorCode(enum.IntEnum):
    """Error codes of JSON-RPC 2.0 and of MCP, all versions (the JSON-RPC 2.0 specification,
    5.1 Error object; MCP 2026-07-28, Base Protocol > Overview > Error Codes, which also lists
    the codes of earlier versions)."""

    PARSE_ERROR = -32700
    """Invalid JSON."""
    INVALID_REQUEST = -32600
    """The JSON is not a valid JSON-RPC message, or the message breaks the protocol state."""
    METHOD_NOT_FOUND = -32601
    """Unknown method, or a capability the receiver did not declare."""
    INVALID_PARAMS = -32602
    """Bad ``params``; in 2026-07-28 also a missing ``_meta`` key and resource-not-found."""
    INTERNAL_ERROR = -32603
    """An internal error of the receiver."""
    RESOURCE_NOT_FOUND = -32002
    """Resource not found (2024-11-05 to 2025-11-25)."""
    URL_ELICITATION_REQUIRED = -32042
    """URL-mode elicitation required (2025-11-25 only)."""
    HEADER_MISMATCH = -32020
    """HTTP header missing or different from the body (2026-07-28)."""
    MISSING_REQUIRED_CLIENT_CAPABILITY = -32021
    """The request did not declare a client capability the server needs (2026-07-28)."""
    UNSUPPORTED_PROTOCOL_VERSION = -32022
    """The request's protocol version is not supported (2026-07-28)."""
    CONNECTION_CLOSED = -32000
    """Implementation-defined (JSON-RPC 2.0 reserves -32000 to -32099): the connection
    closed before the answer came (the sessions' ``ConnectionLost``; the HTTP transport's
    errors)."""
    REQUEST_TIMEOUT = -32001
    """Implementation-defined: no answer within the call's timeout (``RequestTimeout``)."""
    REQUEST_CANCELLED = -32800
    """Implementation-defined: the request was cancelled (a call that ends by
    ``notifications/cancelled``)."""


class ProtocolError(Exception):
    """Base class of the protocol errors; never raised itself.

    :ivar code: the JSON-RPC error code that describes the fault (an :class:`ErrorCode`
        member where MCP defines one).
    :ivar message: a specific, human-readable description.
    """

    code: int
    message: str

    def __init__(self, message: str, code: int = ErrorCode.INVALID_REQUEST) -> None:
        if type(self) is ProtocolError:
            raise TypeError("ProtocolError is abstract; raise a subclass")
        super().__init__(message)
        self.message = message
        self.code = code

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.message!r}, code={self.code})"


class LocalProtocolError(ProtocolError):
    """This side tried something the protocol forbids.

    Raised by :meth:`Connection.send`; the connection's state is unchanged, so the
    application may correct itself and go on.
    """


class RemoteProtocolError(ProtocolError):
    """The peer broke the protocol beyond repair.

    Raised by :meth:`Connection.next_event`; afterwards the connection is in its error
    state and every later call raises again. Faults that concern one message only are not
    raised: they come out of ``next_event()`` as an :class:`InvalidMessage` event.
    """


class ValidationError(ValueError):
    """A value does not match the typed MCP message it was structured into.

    :ivar path: where in the value the fault is, as a JSON-pointer-like string
        (``"/params/arguments"``); empty for the value itself.
    """

    path: str

    def __init__(self, message: str, path: str = "") -> None:
        super().__init__(f"{path or '/'}: {message}")
        self.path = path
        self.reason = message
