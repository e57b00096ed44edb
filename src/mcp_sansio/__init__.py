"""mcp-sansio: a pure, sans-IO implementation of the Model Context Protocol.

Bytes in, typed events out, bytes back for what you send: no I/O, no clock, no threads.
"""

from __future__ import annotations

from ._errors import (
    ErrorCode,
    LocalProtocolError,
    ProtocolError,
    RemoteProtocolError,
    ValidationError,
)
from ._events import (
    Batch,
    ConnectionClosed,
    ErrorResponse,
    Event,
    InputRequired,
    InvalidMessage,
    Message,
    Notification,
    Request,
    RequestId,
    Response,
)
from ._framing import DEFAULT_MAX_MESSAGE_SIZE
from ._sentinels import NEED_DATA, OMITTED, NeedData, Omitted

__version__ = "0.1.0.dev0"

__all__ = [
    "DEFAULT_MAX_MESSAGE_SIZE",
    "NEED_DATA",
    "OMITTED",
    "Batch",
    "ConnectionClosed",
    "ErrorCode",
    "ErrorResponse",
    "Event",
    "InputRequired",
    "InvalidMessage",
    "LocalProtocolError",
    "Message",
    "NeedData",
    "Notification",
    "Omitted",
    "ProtocolError",
    "RemoteProtocolError",
    "Request",
    "RequestId",
    "Response",
    "ValidationError",
    "__version__",
]
