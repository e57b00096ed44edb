"""A one-shot HTTP/1.1 exchange on h11, sans-IO: what each runtime's ``fetch`` (blocking,
asyncio, trio ``_fetch`` modules) drives to make an
:class:`~mcp_sansio.auth.HttpRequest` of an authorization flow (metadata, token requests) or
of a resource server (token introspection).

One request on a new connection (``Connection: close``), any origin, ``http://`` or
``https://``; the response read whole, bounded: its head by :data:`MAX_HEAD_SIZE`, its body
by ``max_body`` bytes. A redirect is not followed: the 3xx is the answer (the flow decides).
A failure is a :class:`FetchError`, whose message names the request by its method and its
URL without the query (a query may carry a code or a token) and never holds a header's
value or a body.
"""

from __future__ import annotations

from typing import Final
from urllib.parse import urlsplit

import h11

from ..auth._oauth import HttpRequest
from ._client_parts import DEFAULT_FETCH_MAX_BODY, DEFAULT_FETCH_TIMEOUT, FetchError, FetchResponse
from ._h11client import MAX_HEAD_SIZE, host_header

__all__ = [
    "DEFAULT_FETCH_MAX_BODY",
    "DEFAULT_FETCH_TIMEOUT",
    "FetchError",
    "FetchResponse",
    "OneShot",
]

_USER_AGENT: Final = ("User-Agent", "mcp-sansio")


def _shown(url: str) -> str:
    """``url`` as errors show it: without user information, query and fragment."""
    parts = urlsplit(url)
    netloc = parts.netloc.rpartition("@")[2]
    return f"{parts.scheme}://{netloc}{parts.path}"


class OneShot:
    """One exchange of ``request`` on a new connection; a runtime connects to
    (:attr:`host`, :attr:`port`), with TLS when :attr:`tls`, writes :meth:`start`, feeds what
    it reads to :meth:`receive` (``b""`` at EOF) until it returns the response.

    Raises :class:`FetchError` for a URL that is not ``http://`` or ``https://``.
    """

    def __init__(self, request: HttpRequest, *, max_body: int = DEFAULT_FETCH_MAX_BODY) -> None:
        if max_body < 0:
            raise ValueError("max_body must not be negative")
        self.request = request
        self.max_body = max_body
        """The bound on the body, in bytes."""
        self.where = f"{request.method} {_shown(request.url)}"
        """The request as errors name it (method and URL without its query)."""
        parts = urlsplit(request.url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise FetchError(f"{self.where}: not an http:// or https:// URL")
        try:
            port = parts.port or (443 if parts.scheme == "https" else 80)
        except ValueError:
            raise FetchError(f"{self.where}: a bad port") from None
        self.tls = parts.scheme == "https"
        """Whether the connection uses TLS."""
        self.host: str = parts.hostname
        """The host to connect to (and the TLS server name)."""
        self.port = port
        """The port."""
        target = parts.path or "/"
        if parts.query:
            target += "?" + parts.query
        self._target = target
        self._host_header = host_header(self.host, port, 443 if self.tls else 80)
        self._conn = h11.Connection(h11.CLIENT, MAX_HEAD_SIZE)
        self._status = 0
        self._headers: tuple[tuple[str, str], ...] = ()
        self._body: list[bytes] = []
        self._size = 0

    def failure(self, reason: str) -> FetchError:
        """The error of this fetch for ``reason``."""
        return FetchError(f"{self.where}: {reason}")

    def start(self) -> bytes:
        """The bytes of the request."""
        request = self.request
        headers = [("Host", self._host_header), _USER_AGENT, ("Connection", "close")]
        headers.extend(request.headers)
        if request.body or request.method in ("POST", "PUT", "PATCH"):
            headers.append(("Content-Length", str(len(request.body))))
        conn = self._conn
        try:
            data = conn.send(
                h11.Request(method=request.method, target=self._target, headers=headers)
            )
        except h11.LocalProtocolError:
            # (h11's message would quote a header's value: a credential)
            raise self.failure("cannot be sent (an invalid method, target or header)") from None
        assert data is not None
        if request.body:
            data += conn.send(h11.Data(data=request.body)) or b""
        return data + (conn.send(h11.EndOfMessage()) or b"")

    def receive(self, data: bytes) -> FetchResponse | None:
        """Bytes read (``b""``: the server closed); the response once it is whole."""
        conn = self._conn
        conn.receive_data(data)
        while True:
            try:
                event = conn.next_event()
            except h11.RemoteProtocolError as exc:
                raise self.failure(f"a malformed answer ({exc})") from None
            if isinstance(event, h11.Response):
                self._status = event.status_code
                self._headers = tuple(
                    (bytes(k).decode("latin-1"), bytes(v).decode("latin-1"))
                    for k, v in event.headers
                )
            elif isinstance(event, h11.Data):
                self._size += len(event.data)
                if self._size > self.max_body:
                    raise self.failure(f"an answer body over {self.max_body} bytes")
                self._body.append(bytes(event.data))
            elif isinstance(event, h11.EndOfMessage):
                return FetchResponse(self._status, self._headers, b"".join(self._body))
            elif event is h11.NEED_DATA:
                if not data:  # pragma: no cover - h11 reports the EOF itself
                    raise self.failure("the server closed the connection before the answer")
                return None
            elif isinstance(event, h11.ConnectionClosed) or event is h11.PAUSED:
                raise self.failure("the server closed the connection before the answer")
            # InformationalResponse (1xx): the answer comes after it
