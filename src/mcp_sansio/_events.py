"""The events: what ``next_event()`` returns and what ``send()`` takes.

Events are frozen attrs classes with keyword-only constructors. The same classes are
used in both directions: a :class:`Request` is what the peer asked of us when it comes
out of ``next_event()``, and what we ask of the peer when it goes into ``send()``.

``params`` and ``result`` are plain JSON-shaped dicts when they come from the peer (typing
them is the application's choice, see :mod:`mcp_sansio.types`); when sending, typed
objects from :mod:`mcp_sansio.types` are accepted too.
"""

from __future__ import annotations

import types
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

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


_E = TypeVar("_E", bound=type)
_SLOT = types.MemberDescriptorType


def _setters(cls: type) -> tuple[list[attrs.Attribute[Any]], dict[str, Any]]:
    """The fields of the frozen attrs class ``cls``, and the names (``_set_<field>``) of
    the ``__set__`` of each field's slot, for the generated constructors below. Only plain
    defaults are supported (no factory, validator or converter): anything else is refused
    when the module is imported."""
    fields = list(attrs.fields(cls))
    env: dict[str, Any] = {"_new": object.__new__, "_cls": cls}
    for field in fields:
        name = field.name
        if field.validator or field.converter or isinstance(field.default, attrs.Factory):  # type: ignore[arg-type]
            raise TypeError(f"{cls.__name__}.{name}: only plain defaults are supported")
        slot = next(
            k.__dict__[name] for k in cls.__mro__ if isinstance(k.__dict__.get(name), _SLOT)
        )
        env[f"_set_{name}"] = slot.__set__
        if field.default is not attrs.NOTHING:
            env[f"_default_{name}"] = field.default
    return fields, env


def _fast_init(cls: _E) -> _E:
    """Give a frozen attrs event class an ``__init__`` that stores each field through its
    slot's descriptor, rather than the one attrs writes (an ``object.__setattr__`` call per
    field, which frozen classes need): the same signature and the same object, faster.
    Events are made for every message in and out."""
    fields, env = _setters(cls)
    params = [
        f.name if f.default is attrs.NOTHING else f"{f.name}=_default_{f.name}" for f in fields
    ]
    body = "".join(f"\n    _set_{f.name}(self, {f.name})" for f in fields)
    exec(f"def __init__(self, *, {', '.join(params)}):{body}", env)
    init = env["__init__"]
    init.__annotations__ = dict(cls.__dict__["__init__"].__annotations__)
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__module__ = cls.__module__
    cls.__init__ = init  # type: ignore[misc]
    return cls


def _positional(cls: type) -> Any:
    """A constructor of ``cls`` taking every field positionally, in order, and skipping
    ``__init__``: for the codec's hot path, which has already checked the values."""
    fields, env = _setters(cls)
    names = ", ".join(f.name for f in fields)
    body = "".join(f"\n    _set_{f.name}(o, {f.name})" for f in fields)
    exec(f"def make({names}):\n    o = _new(_cls){body}\n    return o", env)
    return env["make"]


@attrs.frozen(kw_only=True)
class Event:
    """Base class of every event."""


@_fast_init
@attrs.frozen(kw_only=True)
class Request(Event):
    """A JSON-RPC request: ``method`` with ``params``, to be answered under ``id``."""

    id: RequestId
    """The request id; unique among the sender's requests as the version requires."""
    method: str
    """The MCP method, e.g. ``"tools/call"``."""
    params: Any = None
    """The params object (a dict from the wire), or ``None`` when absent."""


@_fast_init
@attrs.frozen(kw_only=True)
class Notification(Event):
    """A JSON-RPC notification: ``method`` with ``params``, never answered."""

    method: str
    """The MCP notification method, e.g. ``"notifications/progress"``."""
    params: Any = None
    """The params object (a dict from the wire), or ``None`` when absent."""


@_fast_init
@attrs.frozen(kw_only=True)
class Response(Event):
    """A successful answer to the request ``id``."""

    id: RequestId
    """The id of the request this answers."""
    result: Any
    """The result object (a dict from the wire)."""


@_fast_init
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


@_fast_init
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


@_fast_init
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


@_fast_init
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

# Positional constructors of the message events, for the codec (fields in order).
make_request: Callable[[RequestId, str, Any], Request] = _positional(Request)
make_notification: Callable[[str, Any], Notification] = _positional(Notification)
make_response: Callable[[RequestId, Any], Response] = _positional(Response)


@_fast_init
@attrs.frozen(kw_only=True)
class Batch(Event):
    """A JSON-RPC batch (protocol version 2025-03-26 only).

    Received batches are not returned as a whole: their members come out of
    ``next_event()`` one by one, in order. To send several messages as one batch (for
    instance the answers to a received batch), pass a ``Batch`` to ``send()``.
    """

    events: tuple[Message, ...]
    """The members, in order: requests and notifications, or responses."""
