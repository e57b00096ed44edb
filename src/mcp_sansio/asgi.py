"""Streamable HTTP as an ASGI 3 application: serve an MCP server with uvicorn, hypercorn
(its asyncio or trio worker), daphne, or inside any ASGI framework.

.. code-block:: python

   # mymodule.py; run with: uvicorn mymodule:app, or hypercorn -k trio mymodule:app
   from mcp_sansio.example import build_server
   from mcp_sansio.asgi import McpAsgiApp

   app = McpAsgiApp(build_server())

:class:`McpAsgiApp` only moves the HTTP messages: every protocol decision is
``mcp_sansio.http.HttpServer``'s, and each MCP session runs on the running library's
session machinery, the one its h11 listener uses (``mcp_sansio.asyncio.HttpSessions``,
``mcp_sansio.trio.HttpSessions``). It sits above the runtimes (``mcp_sansio.http`` imports
none) and needs nothing beyond the core (no h11); trio only when it runs on trio.
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from contextlib import AbstractAsyncContextManager
from typing import Any, Final, Protocol

from .http._server import DEFAULT_KEEPALIVE, END, Exchange, HttpServer, ResponseHead, Work, wake

__all__ = ["McpAsgiApp"]

# An ASGI connection scope, and the callables to receive and send its events.
_Scope = MutableMapping[str, Any]
_Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
_Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]

_SHUT_DOWN: Final = "the server is shutting down"


class _Waiter(Protocol):
    def set(self) -> None: ...
    def wait(self) -> Awaitable[object]: ...


class _Sessions(Protocol):
    """What the app needs of a runtime: its ``HttpSessions`` (asyncio's, trio's)."""

    async def open(self, keepalive: float | None) -> None: ...
    async def carry_out(self, work: Iterable[Work], ex: Exchange | None) -> None: ...
    async def aclose(self) -> None: ...
    def waiter(self) -> _Waiter: ...
    def beside(self, watch: Callable[[], Awaitable[None]]) -> AbstractAsyncContextManager[None]: ...


def _running_library() -> str:
    """The async library running this task, as ``sniffio`` names it. Trio depends on
    sniffio (and sets its marker), so without sniffio only asyncio can be running."""
    try:
        import sniffio
    except ImportError:
        import asyncio

        try:
            asyncio.get_running_loop()
        except RuntimeError:
            raise RuntimeError("McpAsgiApp runs on asyncio or trio: no loop is running") from None
        return "asyncio"
    try:
        return sniffio.current_async_library()
    except sniffio.AsyncLibraryNotFoundError:
        raise RuntimeError("McpAsgiApp runs on asyncio or trio: no loop is running") from None


def _sessions_on(library: str, core: HttpServer) -> _Sessions:
    """``core``'s sessions on ``library``'s machinery."""
    if library == "asyncio":
        from .asyncio import HttpSessions

        return HttpSessions(core)
    if library == "trio":
        from .trio import HttpSessions as TrioSessions

        return TrioSessions(core)
    raise RuntimeError(f"McpAsgiApp runs on asyncio or trio, not {library}")


class McpAsgiApp:
    """An ASGI 3 application serving ``server`` over Streamable HTTP at ``path``.

    It handles ``http`` scopes (both eras of the protocol, JSON and SSE answers; a client
    that disconnects is reported to ``HttpServer.disconnected()``, which cancels a
    2026-07-28 request) and the ``lifespan`` scope: startup starts the keep-alive task,
    shutdown ends every session, and requests that come after it get 503. Without lifespan
    events (a server run with ``--lifespan off``, an app mounted in a framework that does
    not forward them) the keep-alive task starts with the first request; call
    :meth:`aclose` on the way out to end the sessions. A ``websocket`` scope is refused
    (closed before it is accepted: the server answers 403); any other scope type raises
    :class:`ValueError`, as the ASGI specification asks.

    It runs on asyncio (uvicorn, hypercorn's asyncio worker, daphne) or trio (hypercorn's
    trio worker), the one running at its first event (found with ``sniffio``, which trio
    depends on), and then on that one only; on trio its sessions' tasks live in a trio
    system task from the first event to :meth:`aclose`. It keeps its sessions in this
    process's memory (see "Serving over HTTP" in the
    documentation for several workers). The request's path is matched without the scope's
    ``root_path`` (the prefix the app is mounted at): ``path`` is relative to the mount
    point.

    :param server: the :class:`~mcp_sansio.server.Server` to serve.
    :param path: the MCP endpoint (other paths get 404).
    :param keepalive: seconds between ``: keep-alive`` comments on open SSE streams
        (``None``: none).
    :param options: keywords of ``mcp_sansio.http.HttpServer`` (``allowed_hosts=``,
        ``allowed_origins=``, ``json_response=``, ``max_body_size=``, ``state_keys=``, …)
        and of each :class:`~mcp_sansio.session.ServerSession` (``versions=``, …). The
        DNS-rebinding protection is on by default and accepts only the loopback names
        (``localhost``, ``127.0.0.1``, ``[::1]``) in ``Host`` and ``Origin``: a deployment
        under its own name passes ``allowed_hosts=["mcp.example.com"]`` (and
        ``allowed_origins=[...]`` for the browser origins it serves), or ``None`` to turn
        a check off where a proxy in front does it.
    """

    def __init__(
        self,
        server: Any,
        *,
        path: str = "/mcp",
        keepalive: float | None = DEFAULT_KEEPALIVE,
        **options: Any,
    ) -> None:
        self.core = HttpServer(server, path=path, **options)
        """The sans-IO Streamable HTTP server (``mcp_sansio.http.HttpServer``)."""
        self.keepalive = keepalive
        """Seconds between ``: keep-alive`` comments on open SSE streams, or ``None``."""
        self._sessions: _Sessions | None = None
        self._library: str | None = None
        self._closed = False

    async def __call__(self, scope: _Scope, receive: _Receive, send: _Send) -> None:
        """The ASGI 3 entry point."""
        kind = scope["type"]
        if kind == "http":
            await self._http(scope, receive, send)
        elif kind == "lifespan":
            await self._lifespan(receive, send)
        elif kind == "websocket":
            message = await receive()
            if message["type"] == "websocket.connect":
                await send({"type": "websocket.close", "code": 1000})
        else:
            raise ValueError(f"McpAsgiApp does not serve {kind!r} scopes")

    # ------------------------------------------------------------------ lifespan

    async def _lifespan(self, receive: _Receive, send: _Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                try:
                    await self._start()
                except Exception as exc:
                    await send({"type": "lifespan.startup.failed", "message": str(exc)})
                    return
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await self.aclose()
                await send({"type": "lifespan.shutdown.complete"})
                return

    async def _start(self) -> _Sessions:
        """The sessions, ready on the running library (made on first use)."""
        library = _running_library()
        sessions = self._sessions
        if sessions is None:
            sessions = _sessions_on(library, self.core)
            self._sessions, self._library = sessions, library
        elif library != self._library:
            raise RuntimeError(f"McpAsgiApp runs its sessions on {self._library}, not {library}")
        self._closed = False
        await sessions.open(self.keepalive)
        return sessions

    async def aclose(self) -> None:
        """End every session and stop the keep-alive task (what lifespan shutdown does);
        requests that come later get 503."""
        self._closed = True
        if self._sessions is not None:
            await self._sessions.aclose()

    # ------------------------------------------------------------------ requests

    async def _http(self, scope: _Scope, receive: _Receive, send: _Send) -> None:
        core = self.core
        if self._closed:
            ex = Exchange(scope["method"], _target(scope), {})
            ex.respond(503, _SHUT_DOWN)
            with contextlib.suppress(OSError):  # the client is gone
                await _send_ready(ex, send)
            return
        sessions = await self._start()
        ex = core.begin(scope["method"], _target(scope), scope.get("headers") or ())
        if not ex.finished:
            if await self._read_body(ex, receive):  # the client left before the end of it
                await sessions.carry_out(core.disconnected(ex), None)
                return
            if not ex.finished:
                await sessions.carry_out(core.end(ex), ex)
        gone = False

        async def watch() -> None:
            nonlocal gone
            await _disconnect(receive)
            gone = True
            wake([ex])

        ended = False
        try:
            async with sessions.beside(watch):
                try:
                    while not gone:
                        # a fresh waiter before each drain: what comes during it sets it
                        waiter = ex.waiter = sessions.waiter()
                        ended = await _send_ready(ex, send)
                        if ended or gone:
                            break
                        await waiter.wait()
                except OSError:  # the server could not send: the client is gone
                    pass
        finally:
            if not ended:
                await sessions.carry_out(core.disconnected(ex), None)

    async def _read_body(self, ex: Exchange, receive: _Receive) -> bool:
        """Read the body into ``ex`` until its end or a 413 (the rest is left unread);
        ``True`` if the client left first."""
        limit = self.core.max_body_size
        while True:
            message = await receive()
            kind = message["type"]
            if kind == "http.disconnect":
                return True
            if kind != "http.request":
                continue
            if not ex.receive_body(message.get("body", b""), limit):
                return False
            if not message.get("more_body", False):
                return False


def _target(scope: _Scope) -> str:
    """The request target: the path under the app's ``root_path``, and the query."""
    path: str = scope.get("path") or "/"
    root: str = scope.get("root_path") or ""
    if root and path.startswith(root):
        path = path[len(root) :] or "/"
    query: bytes = scope.get("query_string") or b""
    return f"{path}?{query.decode('latin-1')}" if query else path


async def _send_ready(ex: Exchange, send: _Send) -> bool:
    """Send what ``ex`` has ready (the body parts at hand in one message); ``True`` once
    the response has ended."""
    chunks: list[bytes] = []
    while True:
        part = ex.next_output()
        if part is None:
            if chunks:
                await send(
                    {"type": "http.response.body", "body": b"".join(chunks), "more_body": True}
                )
            return False
        if isinstance(part, ResponseHead):
            headers = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in part.headers]
            await send({"type": "http.response.start", "status": part.status, "headers": headers})
        elif part is END:
            await send({"type": "http.response.body", "body": b"".join(chunks), "more_body": False})
            return True
        else:
            assert isinstance(part, bytes)
            chunks.append(part)


async def _disconnect(receive: _Receive) -> None:
    """Return when the client disconnects (the rest of a refused body is dropped), or
    when ``receive`` fails: the connection is unusable."""
    with contextlib.suppress(Exception):
        while (await receive())["type"] != "http.disconnect":
            pass
