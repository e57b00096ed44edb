"""The parts :class:`~mcp_sansio.http._client.HttpClientTransport` deals in: the actions it
returns (:class:`HttpRequest`, :class:`ToSession`, :class:`AbortRequest`,
:class:`TransportProblem`), its record of each HTTP exchange, its defaults, and the
JSON-RPC errors it makes up for the requests an exchange failed.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any, Final, NamedTuple

import attrs
import orjson

from .._framing import DEFAULT_CLIENT_MAX_MESSAGE_SIZE
from .._sse import SseDecoder
from ..auth._oauth import HttpRequest as AuthHttpRequest
from ..session._client import TRANSPORT_ERROR

__all__ = [
    "DEFAULT_FETCH_MAX_BODY",
    "DEFAULT_FETCH_TIMEOUT",
    "DEFAULT_MAX_BODY_SIZE",
    "DEFAULT_MAX_FOLLOW_UPS",
    "DEFAULT_MAX_RECONNECTS",
    "DEFAULT_RETRY_MS",
    "INVALID_PARAMS",
    "TRANSPORT_ERROR",
    "AbortRequest",
    "AuthFetch",
    "AuthOpenUrl",
    "ClientAction",
    "FetchError",
    "FetchResponse",
    "HttpRequest",
    "ToSession",
    "TransportProblem",
]

#: The largest JSON body, error body or SSE event accepted, in bytes: a client's
#: ``max_message_size`` (64 MiB, :data:`~mcp_sansio.DEFAULT_CLIENT_MAX_MESSAGE_SIZE`).
DEFAULT_MAX_BODY_SIZE: Final = DEFAULT_CLIENT_MAX_MESSAGE_SIZE
#: How long to wait before resuming a stream whose server gave no ``retry`` (milliseconds).
DEFAULT_RETRY_MS: Final = 1000
#: How many times in a row a stream is resumed without a message arriving before its
#: requests fail.
DEFAULT_MAX_RECONNECTS: Final = 5
#: The most follow-up POSTs (those that owe the session no answer: responses to the
#: server's requests, notifications) in flight at once; the others wait their turn.
DEFAULT_MAX_FOLLOW_UPS: Final = 4
#: The error code of a ``tools/call`` refused because of the tool's ``x-mcp-header``.
INVALID_PARAMS: Final = -32602

_ACCEPT_BOTH: Final = ("Accept", "application/json, text/event-stream")
_ACCEPT_SSE: Final = ("Accept", "text/event-stream")
_JSON_BODY: Final = ("Content-Type", "application/json")
_META_VERSION: Final = "io.modelcontextprotocol/protocolVersion"


@attrs.frozen
class HttpRequest:
    """An HTTP request for the caller to make, and whose response to feed back under
    ``stream``."""

    stream: int
    """The transport's number for this exchange; pass it with each part of the response."""
    method: str
    """``"POST"``, ``"GET"`` or ``"DELETE"``."""
    target: str
    """The request target (the endpoint's path and query)."""
    headers: tuple[tuple[str, str], ...]
    """The headers, without ``Host`` and ``Content-Length`` (the HTTP layer adds them)."""
    body: bytes = b""
    """The body (one JSON-RPC message, for a POST)."""
    delay: float = 0.0
    """Seconds to wait before sending it (a reconnection's ``retry``)."""
    timeout: float | None = None
    """For a follow-up (a POST that owes no answer): the seconds, counted from the start of
    writing it, by which its response must have ended; past them, call
    :meth:`HttpClientTransport.response_overdue` and close its connection. ``None``: no
    deadline."""


@attrs.frozen
class ToSession:
    """Bytes for the session: one or more newline-terminated JSON-RPC messages."""

    data: bytes


@attrs.frozen
class AbortRequest:
    """Stop the exchange ``stream`` now: close its connection (it may not be reused), and
    feed nothing more of it. Also sent for a request not started yet (a delayed one)."""

    stream: int
    reason: str


@attrs.frozen
class TransportProblem:
    """Something went wrong that no request of the session is waiting on (a notification
    or a response the server refused, a listen stream that failed): worth a log line."""

    message: str
    level: int = logging.WARNING
    """The level to log it at."""


#: How long a fetch may take, connecting and reading the whole answer included, in seconds.
DEFAULT_FETCH_TIMEOUT: Final = 30.0
#: The largest response body a fetch reads, in bytes (the metadata documents' bound).
DEFAULT_FETCH_MAX_BODY: Final = 1 << 20


class FetchError(Exception):
    """A fetch failed: no connection, a broken or malformed answer, a body over the bound,
    no whole answer in time. The message holds no header value, body or query."""


class FetchResponse(NamedTuple):
    """The answer of a fetch: ``status, headers, body = fetch(...)``."""

    status: int
    """The HTTP status (a 3xx is not followed)."""
    headers: tuple[tuple[str, str], ...]
    """The header fields, names in lower case, values as sent (latin-1)."""
    body: bytes
    """The whole body (at most the fetch's ``max_body`` bytes)."""


@attrs.frozen
class AuthFetch:
    """A flow's HTTP request: make it (any origin; ``https://`` with the client's TLS
    context), within ``timeout`` seconds, reading at most ``max_body`` bytes of body, never
    following a redirect; hand the answer to
    :meth:`~mcp_sansio.http._client.HttpClientTransport.auth_response`, or the failure to
    :meth:`~mcp_sansio.http._client.HttpClientTransport.auth_failed`, with ``flow``."""

    flow: int
    """The transport's number for the flow."""
    request: AuthHttpRequest
    """The request (its ``repr`` hides the ``Authorization`` header and the body)."""
    timeout: float = DEFAULT_FETCH_TIMEOUT
    """The seconds the whole exchange may take."""
    max_body: int = DEFAULT_FETCH_MAX_BODY
    """The largest body read, in bytes."""


@attrs.frozen
class AuthOpenUrl:
    """A flow's person step: give ``url`` to the user's ``open_url`` handler and hand the URL
    the browser was redirected to to
    :meth:`~mcp_sansio.http._client.HttpClientTransport.auth_redirect` (or the handler's
    exception to :meth:`~mcp_sansio.http._client.HttpClientTransport.auth_failed`)."""

    flow: int
    """The transport's number for the flow."""
    url: str
    """The authorization request URL."""


#: What the transport's methods return.
ClientAction = HttpRequest | ToSession | AbortRequest | TransportProblem | AuthFetch | AuthOpenUrl

# How an exchange's body is read.
_NONE: Final = 0  # ignored (202, 204, an unexpected success body)
_JSON: Final = 1
_SSE: Final = 2
_ERROR: Final = 3  # a 4xx/5xx body, read up to the limit

# What an exchange is.
_POST: Final = 0
_RESUME: Final = 1  # GET with Last-Event-ID, for a POST stream cut short
_LISTEN: Final = 2  # the standalone GET stream
_DELETE: Final = 3
_REOPEN: Final = 4  # the replayed initialize of an expired session

#: The id under which the transport replays ``initialize`` to reopen an expired session.
_REOPEN_ID: Final = "mcp-sansio-reopen"
#: The ids under which it restores what the old session held (a number follows).
_RESTORE_ID: Final = "mcp-sansio-restore-"
#: The requests whose success changes what the server holds for the session (initialize
#: era): remembered, to be restored in a reopened session.
_SESSION_STATE_METHODS: Final = frozenset(
    {"resources/subscribe", "resources/unsubscribe", "logging/setLevel"}
)


class _Exchange:
    __slots__ = (
        "attempts",
        "body",
        "buffer",
        "challenge",
        "decoder",
        "follow_up",
        "generation",
        "kind",
        "last_id",
        "malformed",
        "mode",
        "modern",
        "oversized",
        "owed",
        "progress",
        "request",
        "retry",
        "session_id",
        "size",
        "status",
        "stream",
        "truncated",
    )

    def __init__(self, stream: int, kind: int, owed: set[Any], modern: bool = False) -> None:
        self.stream = stream
        self.kind = kind
        self.owed = owed  # the ids of the requests still waiting for their answer here
        self.modern = modern
        self.session_id: str | None = None  # sent with the request
        self.body = b""  # a POST's line, kept to send again in a reopened session
        self.status = 0
        self.mode = _NONE
        self.buffer: list[bytes] = []
        self.size = 0
        self.truncated = False
        self.decoder: SseDecoder | None = None
        self.oversized = 0
        self.malformed = False
        self.attempts = 0  # reconnections without progress (resume, listen)
        self.progress = False  # a message arrived on this exchange
        self.last_id = ""  # the Last-Event-ID this GET was opened with
        self.retry: int | None = None  # the retry in force when it was opened (ms)
        self.follow_up = False  # a POST that owes no answer (bounded, with a deadline)
        # Authorization: the request as last written, the flows ended before it was, and
        # the headers of a 401 or 403 answer to it (with a ClientAuth only).
        self.request: HttpRequest | None = None
        self.generation = 0
        self.challenge: list[tuple[str, str]] | None = None


def _text(value: bytes | str) -> str:
    return value.decode("latin-1") if isinstance(value, bytes) else value


def _error_message(
    request_id: Any,
    code: int,
    message: str,
    status: int = 0,
    data: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    error: dict[str, Any] = {"code": code, "message": message}
    if status or data:
        error["data"] = {"status": status, **data} if data else {"status": status}
    return {"jsonrpc": "2.0", "id": request_id, "error": error}


def _error(request_id: Any, code: int, message: str, status: int = 0) -> bytes:
    return orjson.dumps(_error_message(request_id, code, message, status)) + b"\n"


def _is_id(value: Any) -> bool:
    return type(value) is str or type(value) is int


def _valid_session_id(value: str) -> bool:
    """Visible ASCII, as the specification requires of a session id."""
    return bool(value) and all(0x21 <= ord(c) <= 0x7E for c in value)


def _header_safe(value: str) -> bool:
    """Whether ``value`` can go into a header as it is (printable ASCII, no whitespace at
    either end): a server's event id that cannot is not sent back."""
    return value == value.strip(" \t") and all(0x20 <= ord(c) <= 0x7E for c in value)


_TOKEN = frozenset("!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")


def _check_header(name: str, value: str) -> tuple[str, str]:
    if not name or not set(name) <= _TOKEN:
        raise ValueError(f"not a valid header name: {name!r}")
    if not all(c == "\t" or 0x20 <= ord(c) <= 0x7E for c in value):
        raise ValueError(f"not a valid value for the header {name}: {value!r}")
    return name, value
