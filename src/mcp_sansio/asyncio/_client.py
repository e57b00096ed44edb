"""The asyncio Client."""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import io
import os
import subprocess
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from typing import IO, Any

from .._backpressure import write_options
from .._events import Notification
from ..auth._client_auth import ClientAuth
from ..http._client_auth import authorization_failure
from ..server import Server
from ..session import (
    DEFAULT_MAX_INPUT_ROUNDS,
    DEFAULT_PROBE_TIMEOUT,
    DEFAULT_TIMEOUT,
    Call,
    ClientSession,
    ClientView,
    ConnectionLost,
    McpError,
)
from ..session._client_api import AsyncClientMethods
from ..session._options import h11_missing, take_options
from ._peer import _Peer
from ._serve import _serve
from ._streams import (
    _READ_SIZE,
    DEFAULT_SHUTDOWN_TIMEOUT,
    Streams,
    _InboxProtocol,
    _MemoryPipe,
    _ProcessProtocol,
    _Reader,
    _Writer,
)

# ---------------------------------------------------------------------- client


class Client(AsyncClientMethods, ClientView):
    """An MCP client on a pair of asyncio streams, used as an async context manager::

        async with Client.connect_stdio(["python", "server.py"]) as client:
            tools = await client.list_tools()

    Entering opens the session (a ``server/discover`` probe with a fallback to
    ``initialize`` when the client speaks both eras, as by default); leaving closes it.
    Calls may run concurrently, each in its own task.

    :param reader: the stream to read the server's messages from.
    :param writer: the stream to write to.
    :param on_notification: called with each :class:`~mcp_sansio.Notification` from the
        server (logs, list changes, resource updates); may be a coroutine function.
    :param versions: the protocol versions to speak, newest first (default: all).
    :param handlers: the server's requests this client answers, by method
        (``"sampling/createMessage"``, ``"elicitation/create"``, ``"roots/list"``), each
        ``handler(context, params) -> result`` (plain or ``async``). They also answer the
        ``input_required`` requests of 2026-07-28.
    :param timeout: the default timeout of a request, in seconds (``None``: none).
    :param max_write_buffer: the bound, in bytes, on what waits to be written to the server
        (:data:`DEFAULT_MAX_WRITE_BUFFER`, 1 MiB): past it, the client stops reading the
        server's messages until it is down to half.
    :param write_timeout: when the server takes none of what waits to be written for this
        many seconds (:data:`DEFAULT_WRITE_TIMEOUT`, 30 s; ``None``: no limit), the
        connection is closed as broken: every call fails with :class:`ConnectionLost`
        (``"the server stopped reading: N bytes unwritten for T s ..."``).
    :param options: other keywords of ``mcp_sansio.session.ClientSession``
        (``capabilities=``, ``client_info=``, ``probe_timeout=``, ``max_input_rounds=``,
        ``max_message_size=``, …).
    """

    def __init__(
        self,
        reader: asyncio.StreamReader | None = None,
        writer: asyncio.StreamWriter | None = None,
        *,
        on_notification: Callable[[Notification], Any] | None = None,
        versions: Iterable[str] | None = None,
        handlers: Mapping[str, Callable[..., Any]] | None = None,
        capabilities: Mapping[str, Any] | None = None,
        client_info: Mapping[str, Any] | None = None,
        timeout: float | None = DEFAULT_TIMEOUT,
        probe_timeout: float = DEFAULT_PROBE_TIMEOUT,
        max_input_rounds: int = DEFAULT_MAX_INPUT_ROUNDS,
        **options: Any,
    ) -> None:
        self._max_write_buffer, self._write_timeout = write_options(options)
        self.session = ClientSession(
            versions=versions,
            handlers=handlers,
            capabilities=capabilities,
            client_info=client_info,
            timeout=timeout,
            probe_timeout=probe_timeout,
            max_input_rounds=max_input_rounds,
            **options,
        )
        """The sans-IO session underneath."""
        self.on_notification = on_notification
        """The callback for the server's notifications, or ``None``."""
        self.process: asyncio.subprocess.Process | None = None
        """The server's process, for :meth:`connect_stdio`."""
        self.shutdown_timeout = DEFAULT_SHUTDOWN_TIMEOUT
        """For a stdio server: how long to wait after closing its stdin, then after SIGTERM;
        for :meth:`connect_server`: how long the server's task has to finish."""
        self._reader: _Reader | None = reader
        self._writer: _Writer | None = writer
        self._connect: Callable[[Client], Awaitable[Streams]] | None = None
        self._peer: _Peer | None = None
        self._opened: Mapping[str, Any] | None = None
        self._background: list[asyncio.Task[None]] = []
        self._server_task: asyncio.Task[None] | None = None  # connect_server's
        self._http: object = None  # connect_http's streams (their authorization failures)
        self._closed = False

    # ------------------------------------------------------------------ constructors

    @classmethod
    def _later(
        cls, connect: Callable[[Client], Awaitable[Streams]], options: dict[str, Any]
    ) -> Client:
        client = cls(**options)
        client._connect = connect
        return client

    @classmethod
    def connect_stdio(
        cls,
        command: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        stderr: int | IO[Any] | None = None,
        shutdown_timeout: float = DEFAULT_SHUTDOWN_TIMEOUT,
        **options: Any,
    ) -> Client:
        """A client of a server started as a subprocess, talking over its stdin/stdout.

        :param command: the program and its arguments.
        :param env: its environment (default: this process's).
        :param cwd: its working directory.
        :param stderr: where its stderr goes: ``None`` (default) passes it through to ours;
            a file descriptor, ``subprocess.DEVNULL`` or a file with a ``fileno()``
            receives it; any other object with ``write()`` (``io.BytesIO``,
            ``io.StringIO``) gets a copy as it arrives.
        :param shutdown_timeout: on close, how long to wait for the server to exit after
            its stdin is closed, then after ``SIGTERM``, before ``SIGKILL``.
        :param options: as for :class:`Client`.
        """

        async def connect(client: Client) -> Streams:
            sink: Any = None
            target: Any = stderr
            if stderr is not None and not isinstance(stderr, int):
                try:
                    stderr.fileno()
                except (AttributeError, OSError, ValueError):
                    sink, target = stderr, subprocess.PIPE
            loop = asyncio.get_running_loop()
            inbox = _MemoryPipe()  # the server's stdout
            transport, protocol = await loop.subprocess_exec(
                lambda: _ProcessProtocol(inbox, loop),
                *command,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=target,
                env=dict(env) if env is not None else None,
                cwd=cwd,
            )
            process = asyncio.subprocess.Process(transport, protocol, loop)
            client.process = process
            if sink is not None:
                assert process.stderr is not None
                client._background.append(loop.create_task(_copy(process.stderr, sink)))
            assert process.stdin is not None
            return inbox, process.stdin

        client = cls._later(connect, options)
        client.shutdown_timeout = shutdown_timeout
        return client

    @classmethod
    def connect_tcp(cls, host: str, port: int, **options: Any) -> Client:
        """A client of a server listening on TCP ``host:port``; ``options`` as for
        :class:`Client`."""
        return cls._later(lambda client: _open_connection(host, port), options)

    @classmethod
    def connect_unix(cls, path: str | os.PathLike[str], **options: Any) -> Client:
        """A client of a server listening on the Unix socket ``path``; ``options`` as for
        :class:`Client`."""
        return cls._later(lambda client: _open_connection(path), options)

    @classmethod
    def connect_server(
        cls,
        server: Server,
        *,
        server_options: Mapping[str, Any] | None = None,
        **options: Any,
    ) -> Client:
        """A client of ``server`` (a ``mcp_sansio.server.Server``), served in this event
        loop over an in-memory pipe: no socket, no subprocess. The whole protocol runs as
        over a socket (the bytes, both sessions' checks); for tests, and for embedding a
        server in the program that uses it.

        The server runs as a task from :meth:`open` on; closing the client ends its input,
        and :meth:`aclose` waits up to :attr:`shutdown_timeout` seconds for it to finish
        (its handlers' answers still go out) before cancelling it.

        :param server_options: keywords of ``mcp_sansio.session.ServerSession`` for the
            server's side (``versions=``, ``timeout=``, …), as for :func:`serve_stream`.
        :param options: as for :class:`Client`.
        """

        async def connect(client: Client) -> Streams:
            to_server, to_client = _MemoryPipe(), _MemoryPipe()
            client._server_task = asyncio.get_running_loop().create_task(
                _serve(server, to_server, to_client, server_options or {})
            )
            return to_client, to_server

        return cls._later(connect, options)

    @classmethod
    def connect_http(
        cls,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        auth: ClientAuth | None = None,
        open_url: Callable[[str], str | Awaitable[str]] | None = None,
        **options: Any,
    ) -> Client:
        """A client of a server's Streamable HTTP endpoint, e.g. ``"http://127.0.0.1:8000/mcp"``
        (``https://`` uses TLS with the system's default context, or ``ssl=``). Needs
        ``h11`` (the ``http`` extra).

        Each message is POSTed on a connection from a small keep-alive pool; answers come
        as JSON or event streams, and HTTP failures reach the calls as :class:`McpError`.
        In the initialize era the session id and protocol version go with every request,
        and a ``DELETE`` ends the session on close.

        :param headers: extra headers sent with every request (``Authorization``…).
        :param auth: a :class:`~mcp_sansio.auth.ClientAuth` that authorizes every request
            (such as ``mcp_sansio.auth.BearerToken``): its headers go with each one,
            and a 401 or 403 is handed to it; a flow it starts is run (its HTTP requests to
            any origin, ``https://`` with ``ssl=``) and the request sent again. A call that
            the flow fails raises the flow's :class:`~mcp_sansio.auth.AuthError`. The
            call's ``timeout`` counts the time the flow takes.
        :param open_url: the handler of a flow's person step: ``open_url(url)`` returns
            the URL the browser was redirected to; a coroutine function is awaited, a plain
            callable runs in a worker thread. Without it a flow that needs a person fails.
        :param options: the transport's keywords ``max_body_size=`` (bytes, default 64 MiB),
            ``max_reconnects=``, ``default_retry_ms=``, ``listen=`` (open the standalone GET
            stream; off by default), ``reopen=`` (start a new session when the server answers
            404 to the session id; on by default), ``expired_statuses=`` (the statuses that
            mean it expired: ``(404,)``; ``(404, 400)`` for servers that answer 400),
            ``max_idle=``, ``ssl=``, ``close_timeout=`` (see
            ``mcp_sansio.asyncio._http_client.HttpStreams``); the others as for
            :class:`Client`.
        """
        try:
            from ._http_client import HTTP_OPTIONS, HttpStreams, parse_url
        except ImportError as exc:  # pragma: no cover - h11 missing
            raise h11_missing() from exc
        parse_url(url)  # a bad URL fails here, not at open()
        transport_options = take_options(options, HTTP_OPTIONS)

        async def connect(client: Client) -> Streams:
            streams = HttpStreams(
                url, headers=headers, auth=auth, open_url=open_url, **transport_options
            )
            client._http = streams
            return streams, streams

        return cls._later(connect, options)

    # ------------------------------------------------------------------ opening, closing

    async def open(self) -> Mapping[str, Any]:
        """Connect and open the session (what ``async with`` does); returns the
        ``initialize`` or ``server/discover`` result. Raises :class:`McpError` (such as
        :class:`RequestTimeout` or :class:`ConnectionLost`) when the server refuses or
        does not answer; the connection is then closed."""
        if self._peer is not None:
            raise RuntimeError("this client is already open")
        try:
            if self._connect is not None:
                self._reader, self._writer = await self._connect(self)
            if self._reader is None or self._writer is None:
                raise RuntimeError("a Client needs a reader and a writer, or a connect_*()")
            peer = self._peer = _Peer(
                self.session,
                self._reader,
                self._writer,
                self.on_notification,
                max_write_buffer=self._max_write_buffer,
                write_timeout=self._write_timeout,
            )
            peer.opened = peer.loop.create_future()
            peer.start()
            if self.process is not None:
                self._background.append(peer.loop.create_task(self._watch(self.process, peer)))
            peer.run(self.session.open(peer.now()))
            try:
                self._opened = await peer.opened
            except McpError as exc:
                failure = authorization_failure(self._http, exc)
                if failure is None:
                    raise
                raise failure from failure.__cause__  # a failed authorization: its error
            return self._opened
        except BaseException:
            await self.aclose()
            raise

    async def _watch(self, process: asyncio.subprocess.Process, peer: _Peer) -> None:
        # When the server dies but something else holds its stdout open, EOF never comes.
        await _exited(process, None, poll=0.25)
        await peer.wait_read(1.0)
        peer.end_reading()

    async def aclose(self) -> None:
        """Close the session. A stdio server is shut down as the spec says: its stdin is
        closed, then (after :attr:`shutdown_timeout` seconds each) ``SIGTERM`` and
        ``SIGKILL``. Calls still in flight fail with :class:`ConnectionLost`."""
        if self._closed:
            return
        self._closed = True
        writer, peer, process = self._writer, self._peer, self.process
        if writer is not None:
            writer.close()
        if process is not None:
            await _stop_process(process, self.shutdown_timeout)
        if peer is not None:
            await peer.wait_read(self.shutdown_timeout if process is not None else 0.5)
            await peer.stop()
        served = self._server_task
        if served is not None:
            await asyncio.wait([served], timeout=self.shutdown_timeout)
            served.cancel()
            await asyncio.gather(served, return_exceptions=True)
        for task in self._background:
            task.cancel()
        await asyncio.gather(*self._background, return_exceptions=True)
        if process is not None:
            # Its pipes stay open while a child of the server holds them; asyncio offers no
            # public way to close them but the transport.
            transport = getattr(process, "_transport", None)
            if transport is not None:
                transport.close()
        if writer is not None:
            if peer is not None:
                await peer.flush()
            with contextlib.suppress(OSError, RuntimeError):
                await writer.wait_closed()

    async def __aenter__(self) -> Client:
        await self.open()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    # ------------------------------------------------------------------ state

    def _require(self) -> _Peer:
        if self._closed:
            raise ConnectionLost("the client is closed")
        if self._peer is None:
            raise RuntimeError("the client is not open")
        return self._peer

    @property
    def closed(self) -> bool:
        """Whether the connection is closed (by us or by the server), or broken."""
        peer = self._peer
        return self._closed or self.session.closed or (peer is not None and peer.dead)

    # ------------------------------------------------------------------ calls

    # The hooks of AsyncClientMethods (request, notify and the convenience calls).

    def _check_open(self) -> None:
        peer = self._require()
        if peer.dead:
            raise ConnectionLost(peer.failure or "the connection broke")

    def _now(self) -> float:
        return self._require().now()

    def _wrap_progress(
        self, on_progress: Callable[[Mapping[str, Any]], Any]
    ) -> Callable[[Mapping[str, Any]], Any]:
        peer = self._require()

        def callback(params: Mapping[str, Any]) -> None:
            # What the callback raises fails the call (the session's policy); a coroutine
            # it returns runs as a task, whose errors are logged.
            result = on_progress(params)
            if inspect.isawaitable(result):
                peer.callback(lambda _: result, None)

        return callback

    async def _send_call(self, call: Call, data: bytes) -> Any:
        try:
            return await self._require().wait(call, data)
        except McpError as exc:
            failure = authorization_failure(self._http, exc)
            if failure is None:
                raise
            raise failure from failure.__cause__  # a failed authorization: its error

    async def _send(self, data: bytes) -> None:
        peer = self._require()
        peer.write(data)
        await peer.drain()


async def _open_connection(
    host_or_path: str | os.PathLike[str], port: int | None = None
) -> Streams:
    """Connect to ``host:port`` over TCP, or to the Unix socket ``host_or_path`` when there
    is no port; the socket's bytes go into a :class:`_MemoryPipe`."""
    loop = asyncio.get_running_loop()
    inbox = _MemoryPipe()
    if port is None:
        transport, protocol = await loop.create_unix_connection(
            lambda: _InboxProtocol(inbox), os.fspath(host_or_path)
        )
    else:
        transport, protocol = await loop.create_connection(
            lambda: _InboxProtocol(inbox), str(host_or_path), port
        )
    return inbox, asyncio.StreamWriter(transport, protocol, None, loop)


async def _copy(source: asyncio.StreamReader, sink: Any) -> None:
    text = isinstance(sink, io.TextIOBase)
    while data := await source.read(_READ_SIZE):
        sink.write(data.decode(errors="replace") if text else data)


async def _stop_process(process: asyncio.subprocess.Process, timeout: float) -> None:
    """Wait for a process whose stdin was closed; then SIGTERM, wait; then SIGKILL."""
    for stop in (None, process.terminate, process.kill):
        if stop is not None:
            with contextlib.suppress(ProcessLookupError):
                stop()
        if await _exited(process, timeout if stop is not process.kill else None):
            return


async def _exited(
    process: asyncio.subprocess.Process, timeout: float | None, poll: float = 0.05
) -> bool:
    """Wait until ``process`` exits, at most ``timeout`` seconds; whether it did. (Its
    ``wait()`` also waits until its pipes close, which a child of it may delay forever.)"""
    loop = asyncio.get_running_loop()
    end = None if timeout is None else loop.time() + timeout
    waiting = loop.create_task(process.wait())
    try:
        while process.returncode is None:
            step = poll if end is None else min(poll, end - loop.time())
            if step <= 0:
                return False
            await asyncio.wait({waiting}, timeout=step)
        return True
    finally:
        waiting.cancel()
