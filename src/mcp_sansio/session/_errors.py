"""The sessions' exceptions and defaults."""

from __future__ import annotations

import enum
from collections.abc import Mapping
from typing import Any, Final

from .._errors import ErrorCode

#: Default time a request may take, in seconds, before it is cancelled.
DEFAULT_TIMEOUT: Final = 60.0
#: Default hard limit, in seconds, when progress keeps resetting a request's timeout.
DEFAULT_MAX_TIMEOUT: Final = 600.0
#: How long a client that speaks both eras waits for its ``server/discover`` probe.
DEFAULT_PROBE_TIMEOUT: Final = 10.0
#: How many ``input_required`` rounds a client goes through for one call before giving up.
DEFAULT_MAX_INPUT_ROUNDS: Final = 8
#: How many unreadable messages in a row a session takes before it closes the connection as
#: broken: messages that are not JSON (-32700), or JSON that is no JSON-RPC message and has no
#: id to answer (-32600 to a null id). Each is answered as JSON-RPC says until then.
DEFAULT_MAX_UNREADABLE: Final = 256


class DefaultType(enum.Enum):
    """The type of :data:`~mcp_sansio.session.DEFAULT`."""

    DEFAULT = "DEFAULT"


#: "The session's default" (for ``timeout=``).
DEFAULT: Final = DefaultType.DEFAULT


class McpError(Exception):
    """A request failed: the peer answered with an error, or it timed out, or the
    connection went away. Raised by the adapters' calls; handlers may raise it to answer
    with that JSON-RPC error.

    :ivar code: the JSON-RPC error code.
    :ivar message: the error message.
    :ivar data: the error's ``data``, or ``None``.
    """

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(f"{message} (code {code})")
        self.code = code
        self.message = message
        self.data = data


class RequestTimeout(McpError):
    """A request got no answer in time; ``notifications/cancelled`` was sent for it."""

    def __init__(self, message: str = "request timed out") -> None:
        super().__init__(-32001, message)


class ConnectionLost(McpError):
    """The connection closed (or broke) before the request was answered."""

    def __init__(self, message: str = "connection closed before the answer") -> None:
        super().__init__(-32000, message)


class NeedInput(Exception):
    """Raised inside a 2026-07-28 server handler that asked for input it does not have yet;
    the session turns it into an ``input_required`` result. Handlers never catch it.

    :param key: the key of the input request in ``inputRequests``.
    :param request: the input request, ``{"method", "params"}``.
    :param more: other input requests of the same round, by key (a handler that needs
        several answers asks for them all at once).
    """

    def __init__(
        self,
        key: str,
        request: Mapping[str, Any],
        more: Mapping[str, Mapping[str, Any]] | None = None,
    ) -> None:
        super().__init__(key)
        self.key = key
        self.request = request
        self.requests: dict[str, Mapping[str, Any]] = {key: request, **(more or {})}
        """Every input request of the round, by key (``key`` first)."""


def _error_of(exc: BaseException) -> McpError:
    if isinstance(exc, McpError):
        return exc
    return McpError(ErrorCode.INTERNAL_ERROR, f"{type(exc).__name__}: {exc}")
