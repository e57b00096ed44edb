"""A one-shot HTTP request on asyncio: :func:`fetch`.

For the requests of an authorization flow (metadata documents, token requests) and a
resource server's token introspection: any origin, ``https://`` with ``ssl`` (default: the
system's default context), one connection per request, the whole answer read within
``timeout`` seconds and at most ``max_body`` bytes of body, redirects not followed. The HTTP
is the sans-IO :class:`~mcp_sansio.http._client_fetch.OneShot`'s; this module only opens the
connection and moves bytes.
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl as _ssl
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
        return await asyncio.wait_for(_exchange(shot, ssl), timeout)
    except asyncio.TimeoutError:
        raise shot.failure(f"no whole answer within {timeout:g} s") from None
    except OSError as exc:
        raise shot.failure(str(exc.strerror or exc) or type(exc).__name__) from None


async def _exchange(shot: OneShot, ssl: _ssl.SSLContext | None) -> FetchResponse:
    context = None
    if shot.tls:
        context = ssl if ssl is not None else _ssl.create_default_context()
    reader, writer = await asyncio.open_connection(
        shot.host,
        shot.port,
        ssl=context,
        server_hostname=shot.host if context is not None else None,
        limit=_READ_SIZE,
    )
    try:
        writer.write(shot.start())
        await writer.drain()
        while True:
            response = shot.receive(await reader.read(_READ_SIZE))
            if response is not None:
                return response
    finally:
        writer.close()
        with contextlib.suppress(Exception):
            await writer.wait_closed()
