"""The events: what ``next_event()`` returns and what ``send()`` takes.

Events are frozen attrs classes with keyword-only constructors. The same classes are
used in both directions: a :class:`Request` is what the peer asked of us when it comes
out of ``next_event()``, and what we ask of the peer when it goes into ``send()``.

``params`` and ``result`` are plain JSON-shaped dicts when they come from the peer (typing
them is the application's choice, see :mod:`mcp_sansio.types`); when sending, typed
objects from :mod:`mcp_sansio.types` are accepted too.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from ._sentinels import OMITTED

__all__ = [
    "Batch",
    "ConnectionClosed",
    "ErrorResponse",
    "Event",
    "InputRequired",
    "InvalidMessage",
    "Message",
    "Notification",
    "Request",
    "RequestId",
    "Response",
]

#: A JSON-RPC request id: a string or an integer (never null, a bool or a float).
#: ``"1"`` and ``1`` are different ids.
RequestId = int | str


@attrs.frozen(kw_only=True)
class Event:
    """Base class of every event."""


@attrs.frozen(kw_only=True)
class Request(Event):
    """A JSON-RPC request: ``method`` with ``params``, to be answered under ``id``."""

    id: RequestId
    """The request id; unique among the sender's requests as the version requires."""
    method: str
    """The MCP method, e.g. ``"tools/call"``."""
    params: Any = None
    """The params object (a dict from the wire), or ``None`` when absent."""


@attrs.frozen(kw_only=True)
class Notification(Event):
    """A JSON-RPC notification: ``method`` with ``params``, never answered."""

    method: str
    """The MCP notification method, e.g. ``"notifications/progress"``."""
    params: Any = None
    """The params object (a dict from the wire), or ``None`` when absent."""


@attrs.frozen(kw_only=True)
class Response(Event):
    """A successful answer to the request ``id``."""

    id: RequestId
    """The id of the request this answers."""
    result: Any
    """The result object (a dict from the wire)."""


@attrs.frozen(kw_only=True)
class InputRequired(Event):
    """A 2026-07-28 answer with ``resultType: "input_required"`` to our request ``id``.

    The request is finished (its id is free again); to go on, answer ``input_requests``
    and send a retry built by :meth:`Connection.retry_request`.
    """

    id: RequestId
    """The id of the request this answers."""
    result: Mapping[str, Any]
    """The whole result object, as received."""
    request: Request
    """Our original request (its method and params), for building the retry."""

    @property
    def input_requests(self) -> Mapping[str, Any]:
        """The ``inputRequests`` of the result, keyed as the server chose (may be empty)."""
        value = self.result.get("inputRequests")
        return value if isinstance(value, Mapping) else {}

    @property
    def request_state(self) -> str | None:
        """The opaque ``requestState`` to echo on the retry, or ``None`` when absent."""
        value = self.result.get("requestState")
        return value if isinstance(value, str) else None


@attrs.frozen(kw_only=True)
class ErrorResponse(Event):
    """An error answer to the request ``id``.

    ``id`` is ``None`` only where the request's id could not be read (a parse error, an
    unreadable envelope); it is then sent as ``"id": null``.
    """

    id: RequestId | None
    """The id of the request this answers, or ``None``."""
    code: int
    """The JSON-RPC error code (see :class:`ErrorCode`)."""
    message: str
    """A short description of the error."""
    data: Any = OMITTED
    """Additional information; :data:`OMITTED` when absent (``None`` means JSON null)."""


@attrs.frozen(kw_only=True)
class InvalidMessage(Event):
    """What the peer sent broke the protocol; nothing else about the connection changed.

    Send ``reply`` back with ``send()`` when it is not ``None``; it is ``None`` where the
    protocol wants no answer (a bad notification, a stray or malformed response).
    """

    code: int
    """The JSON-RPC error code that names the fault."""
    message: str
    """A specific description of what was wrong."""
    reply: ErrorResponse | None
    """The error response to send back, or ``None``."""
    id: RequestId | None = None
    """The request id involved, where one could be read (the peer's request id, or the id
    of our request that a malformed response claimed to answer)."""
    raw: bytes = b""
    """The offending message as received (cut to 1 KiB)."""


@attrs.frozen(kw_only=True)
class ConnectionClosed(Event):
    """The peer closed its side (``receive_data(b"")``).

    ``unanswered`` lists the ids of our requests that will now never be answered.
    Answers to the peer's requests may still be sent (half-close).
    """

    unanswered: tuple[RequestId, ...] = ()
    """Ids of our requests still waiting for an answer, in the order they were sent."""


#: The four JSON-RPC message events.
Message = Request | Notification | Response | ErrorResponse


@attrs.frozen(kw_only=True)
class Batch(Event):
    """A JSON-RPC batch (protocol version 2025-03-26 only).

    Received batches are not returned as a whole: their members come out of
    ``next_event()`` one by one, in order. To send several messages as one batch (for
    instance the answers to a received batch), pass a ``Batch`` to ``send()``.
    """

    events: tuple[Message, ...]
    """The members, in order: requests and notifications, or responses."""
