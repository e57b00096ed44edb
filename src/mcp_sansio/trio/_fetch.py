"""A one-shot HTTP request on trio: :func:`fetch`.

For the requests of an authorization flow (metadata documents, token requests) and a
resource server's token introspection: any origin, ``https://`` with ``ssl`` (default: the
system's default context), one connection per request, the whole answer read within
``timeout`` seconds and at most ``max_body`` bytes of body, redirects not followed. The HTTP
is the sans-IO :class:`~mcp_sansio.http._client_fetch.OneShot`'s; this module only opens the
connection and moves bytes.
"""

from __future__ import annotations

import ssl as _ssl
from typing import Final

import trio

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
_BROKEN: Final = (OSError, trio.BrokenResourceError, trio.ClosedResourceError)


async def fetch(
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
    try:
        with trio.fail_after(timeout):
            return await _exchange(shot, ssl)
    except trio.TooSlowError:
        raise shot.failure(f"no whole answer within {timeout:g} s") from None
    except _BROKEN as exc:
        cause = exc.__cause__
        reason = str(exc) or str(cause or "") or type(exc).__name__
        raise shot.failure(reason) from None


async def _exchange(shot: OneShot, ssl: _ssl.SSLContext | None) -> FetchResponse:
    stream: trio.abc.Stream
    if shot.tls:
        context = ssl if ssl is not None else _ssl.create_default_context()
        stream = await trio.open_ssl_over_tcp_stream(
            shot.host, shot.port, https_compatible=True, ssl_context=context
        )
    else:
        stream = await trio.open_tcp_stream(shot.host, shot.port)
    try:
        await stream.send_all(shot.start())
        while True:
            response = shot.receive(bytes(await stream.receive_some(_READ_SIZE)))
            if response is not None:
                return response
    finally:
        await trio.aclose_forcefully(stream)
