"""A one-shot HTTP request on blocking sockets: :func:`fetch`.

For the requests of an authorization flow (metadata documents, token requests) and a
resource server's token introspection: any origin, ``https://`` with ``ssl`` (default: the
system's default context), one connection per request, the whole answer read within
``timeout`` seconds and at most ``max_body`` bytes of body, redirects not followed. The HTTP
is the sans-IO :class:`~mcp_sansio.http._client_fetch.OneShot`'s; this module only opens the
socket and moves bytes.
"""

from __future__ import annotations

import socket
import ssl as _ssl
import time
from typing import Final

from ..auth._oauth import HttpRequest
from ..http._client_fetch import (
    DEFAULT_FETCH_MAX_BODY,
    DEFAULT_FETCH_TIMEOUT,
    FetchError,
    FetchResponse,
    OneShot,
)

__all__ = ["DEFAULT_FETCH_MAX_BODY", "DEFAULT_FETCH_TIMEOUT", "FetchError", "fetch"]

_READ_SIZE: Final = 1 << 16


def fetch(
    request: HttpRequest,
    *,
    timeout: float = DEFAULT_FETCH_TIMEOUT,
    ssl: _ssl.SSLContext | None = None,
    max_body: int = DEFAULT_FETCH_MAX_BODY,
) -> FetchResponse:
    """Make ``request`` and return its answer, ``(status, headers, body)``; raises
    :class:`~mcp_sansio.http._client_fetch.FetchError` when it cannot be had (no connection,
    a broken or malformed answer, a body over ``max_body`` bytes, not whole within
    ``timeout`` seconds)."""
    shot = OneShot(request, max_body=max_body)
    deadline = time.monotonic() + timeout

    def left() -> float:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError
        return remaining

    sock: socket.socket | None = None
    try:
        sock = socket.create_connection((shot.host, shot.port), left())
        if shot.tls:
            context = ssl if ssl is not None else _ssl.create_default_context()
            sock = context.wrap_socket(sock, server_hostname=shot.host)
        sock.settimeout(left())
        sock.sendall(shot.start())
        while True:
            sock.settimeout(left())
            response = shot.receive(sock.recv(_READ_SIZE))
            if response is not None:
                return response
    except TimeoutError:
        raise shot.failure(f"no whole answer within {timeout:g} s") from None
    except OSError as exc:
        raise shot.failure(str(exc.strerror or exc) or type(exc).__name__) from None
    finally:
        if sock is not None:
            sock.close()
