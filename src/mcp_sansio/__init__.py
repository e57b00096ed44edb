"""mcp-sansio: a pure, sans-IO implementation of the Model Context Protocol.

Bytes in, typed events out, bytes back for what you send: no I/O, no clock, no threads.
"""

from __future__ import annotations

from ._config import Config
from ._connection import Connection, NextEvent
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
from ._framing import DEFAULT_CLIENT_MAX_MESSAGE_SIZE, DEFAULT_MAX_MESSAGE_SIZE
from ._ids import IdHistory
from ._request_state import RequestStateSeal
from ._sentinels import NEED_DATA, OMITTED, NeedData, Omitted
from ._state import Role, State
from ._version import __version__
from ._versions import (
    ALL_VERSIONS,
    Direction,
    Era,
    EraPolicy,
    Kind,
    MethodRule,
    MethodSpec,
    VersionSpec,
)

__all__ = [
    "ALL_VERSIONS",
    "DEFAULT_CLIENT_MAX_MESSAGE_SIZE",
    "DEFAULT_MAX_MESSAGE_SIZE",
    "NEED_DATA",
    "OMITTED",
    "Batch",
    "Config",
    "Connection",
    "ConnectionClosed",
    "Direction",
    "Era",
    "EraPolicy",
    "ErrorCode",
    "ErrorResponse",
    "Event",
    "IdHistory",
    "InputRequired",
    "InvalidMessage",
    "Kind",
    "LocalProtocolError",
    "Message",
    "MethodRule",
    "MethodSpec",
    "NeedData",
    "NextEvent",
    "Notification",
    "Omitted",
    "ProtocolError",
    "RemoteProtocolError",
    "Request",
    "RequestId",
    "RequestStateSeal",
    "Response",
    "Role",
    "State",
    "ValidationError",
    "VersionSpec",
    "__version__",
]
