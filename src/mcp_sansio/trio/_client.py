"""The trio Client."""

from __future__ import annotations

import contextlib
import math
import os
import subprocess
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import IO, Any

import trio

from .._backpressure import write_options
from .._events import Notification
from ..auth._client_auth import ClientAuth
from ..http._client_auth import authorization_failure
from ..server import Server
from ..session import (
    Call,
    ClientSession,
    ClientView,
    ConnectionLost,
    McpError,
)
from ..session._client_api import AsyncClientMethods
from ..session._options import h11_missing, take_options
from ._loop import _GONE, _STDERR_TAIL, DEFAULT_SHUTDOWN_TIMEOUT, _Loop
from ._serve import serve_stream

# ---------------------------------------------------------------------- client


class Client(AsyncClientMethods, ClientView):
    """An MCP client on a trio stream, used as an async context manager::

        async with Client.connect_tcp("127.0.0.1", port) as client:
            tools = await client.list_tools()

    Entering opens the session (a ``server/discover`` probe with a fallback to
    ``initialize`` when the client speaks both eras, as by default); leaving closes it,
    after writing what is queued (within ``shutdown_timeout``), and closes the stream.
    Calls may run concurrently, each in its own task.

    :param stream: a connected ``trio.abc.Stream`` (for a pair of one-way streams, a
        ``trio.StapledStream``).
    :param on_notification: called with each :class:`~mcp_sansio.Notification` from the
        server (logs, list changes, resource updates); a coroutine function runs as a task.
        What a plain function raises tears the client down.
    :param shutdown_timeout: see :data:`DEFAULT_SHUTDOWN_TIMEOUT`.
    :param max_write_buffer: the bound, in bytes, on what waits to be written to the server
        (:data:`DEFAULT_MAX_WRITE_BUFFER`, 1 MiB): past it, the client stops reading the
        server's messages until it is down to half.
    :param write_timeout: when a chunk of what waits to be written (at most 64 KiB) is not
        taken by the server within this many seconds (:data:`DEFAULT_WRITE_TIMEOUT`, 30 s;
        ``None``: no limit), the connection is closed as broken: every call fails with
        ``mcp_sansio.session.ConnectionLost`` (``"the server stopped reading: N bytes
        unwritten for T s ..."``).
    :param session_options: the keywords of ``mcp_sansio.session.ClientSession``:
        ``versions=`` (the protocol versions to speak, newest first; default: all),
        ``handlers=`` (the server's requests this client answers, by method:
        ``"sampling/createMessage"``, ``"elicitation/create"``, ``"roots/list"``; each
        ``handler(context, params) -> result``, plain or ``async``; they also answer the
        ``input_required`` requests of 2026-07-28), ``timeout=`` (the default timeout of a
        request in seconds, ``mcp_sansio.session.DEFAULT_TIMEOUT``; ``None``: none),
        ``capabilities=``, ``client_info=``, ``probe_timeout=``, ``max_input_rounds=``,
        ``log_level=``, and the :class:`~mcp_sansio.Connection` keywords.
    """

    def __init__(
        self,
        stream: trio.abc.Stream,
        *,
        on_notification: Callable[[Notification], Any] | None = None,
        shutdown_timeout: float = DEFAULT_SHUTDOWN_TIMEOUT,
        **session_options: Any,
    ) -> None:
        self._max_write_buffer, self._write_timeout = write_options(session_options)
        self.session = ClientSession(**session_options)
        """The sans-IO session underneath."""
        self.process: trio.Process | None = None
        """The server's process, for :meth:`connect_stdio`."""
        self.shutdown_timeout = shutdown_timeout
        """See :data:`DEFAULT_SHUTDOWN_TIMEOUT`."""
        self._stream: trio.abc.Stream | None = stream
        self._on_notification = on_notification
        self._connect: Callable[[], Any] | None = None
        self._loop: _Loop | None = None
        self._nursery_cm: Any = None
        self._nursery: trio.Nursery | None = None
        self._closed = False
        self._stderr = bytearray()
        self._stderr_scope = trio.CancelScope(shield=True)
        self._stderr_done = trio.Event()
        # A stream with tasks of its own (Streamable HTTP: its exchanges) sets this: started
        # in the client's nursery before the loop, shielded like it, cancelled with it.
        self._stream_tasks: Callable[..., Awaitable[None]] | None = None
        self._stream_scope = trio.CancelScope(shield=True)

    # -------------------------------------------------------------- constructors

    @classmethod
    def _later(cls, connect: Callable[[Client], Any], options: dict[str, Any]) -> Client:
        client = cls(None, **options)  # type: ignore[arg-type]
        client._connect = lambda: connect(client)
        return client

    @classmethod
    def connect_stdio(
        cls,
        command: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        stderr: int | IO[Any] | None = None,
        **options: Any,
    ) -> Client:
        """A client for a server started as ``command``, speaking over its stdin and stdout.

        ``stderr``: ``None`` passes the server's stderr through; a file or a file descriptor
        receives it; ``subprocess.PIPE`` keeps its last 64 KiB in :attr:`stderr`.
        Leaving the client closes the server's stdin; the server gets ``shutdown_timeout``
        seconds to exit, then ``SIGTERM`` and as long again, then ``SIGKILL``. If it dies
        or closes its stdout, the calls in flight fail with
        ``mcp_sansio.session.ConnectionLost``. Other keywords: as for :class:`Client`.
        """

        async def connect(client: Client) -> trio.abc.Stream:
            process = await trio.lowlevel.open_process(
                list(command),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=stderr,
                env=env,
                cwd=cwd,
            )
            client.process = process
            assert process.stdin is not None
            assert process.stdout is not None
            return trio.StapledStream(process.stdin, process.stdout)

        return cls._later(connect, options)

    @classmethod
    def connect_tcp(cls, host: str, port: int, **options: Any) -> Client:
        """A client for the server listening on ``host``:``port``."""

        async def connect(client: Client) -> trio.abc.Stream:
            return await trio.open_tcp_stream(host, port)

        return cls._later(connect, options)

    @classmethod
    def connect_unix(cls, path: str | os.PathLike[str], **options: Any) -> Client:
        """A client for the server listening on the Unix socket at ``path``."""

        async def connect(client: Client) -> trio.abc.Stream:
            return await trio.open_unix_socket(path)

        return cls._later(connect, options)

    @classmethod
    def connect_server(
        cls,
        server: Server,
        *,
        server_options: Mapping[str, Any] | None = None,
        **options: Any,
    ) -> Client:
        """A client of ``server`` (a ``mcp_sansio.server.Server``), served by a task of the
        client's own over an in-memory stream (``trio.testing.memory_stream_pair``): no
        socket, no subprocess. The whole protocol runs as over a socket; for tests, and
        for embedding a server in the program that uses it. Leaving the client cancels
        the server's task.

        :param server_options: keywords of ``mcp_sansio.session.ServerSession`` for the
            server's side (``versions=``, ``timeout=``, …), as for :func:`serve_stream`.
        :param options: as for :class:`Client`.
        """

        async def connect(client: Client) -> trio.abc.Stream:
            import trio.testing

            here, there = trio.testing.memory_stream_pair()

            async def serve(*, task_status: trio.TaskStatus[None]) -> None:
                task_status.started()
                await serve_stream(server, there, **(server_options or {}))

            client._stream_tasks = serve
            return here

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
        (``https://`` uses TLS, ``trio.open_ssl_over_tcp_stream``, with the system's default
        context, or ``ssl=``). Needs ``h11`` (the ``http`` extra).

        Each message is POSTed on a connection from a small keep-alive pool, in a task of
        its own (the client's calls run concurrently as ever); answers come as JSON or
        event streams, and HTTP failures reach the calls as
        ``mcp_sansio.session.McpError``. In the initialize era the session id and protocol
        version go with every request, and a ``DELETE`` ends the session on close.

        :param headers: extra headers sent with every request (``Authorization``…).
        :param auth: a :class:`~mcp_sansio.auth.ClientAuth` that authorizes every request
            (such as ``mcp_sansio.auth.BearerToken``): its headers go with each one,
            and a 401 or 403 is handed to it; a flow it starts is run (its HTTP requests to
            any origin, ``https://`` with ``ssl=``) and the request sent again. A call (or
            the opening) that the flow fails raises the flow's
            :class:`~mcp_sansio.auth.AuthError`. The call's ``timeout`` counts the time the
            flow takes.
        :param open_url: the handler of a flow's person step: ``open_url(url)`` returns the
            URL the browser was redirected to; a coroutine function is awaited, a plain
            callable runs in a worker thread. Without it a flow that needs a person fails.
        :param options: the transport's keywords ``max_body_size=`` (bytes, default 64 MiB),
            ``max_reconnects=``, ``default_retry_ms=``, ``listen=`` (open the standalone GET
            stream; off by default), ``reopen=`` (start a new session when the server answers
            404 to the session id; on by default), ``expired_statuses=`` (the statuses that
            mean it expired: ``(404,)``; ``(404, 400)`` for servers that answer 400),
            ``max_idle=``, ``ssl=``, ``close_timeout=`` (see
            ``mcp_sansio.trio._http_client.HttpStream``); the others as for
            :class:`Client`.
        """
        try:
            from ._http_client import HTTP_OPTIONS, HttpStream, parse_url
        except ImportError as exc:  # pragma: no cover - h11 missing
            raise h11_missing() from exc
        parse_url(url)  # a bad URL fails here, not when entering
        transport_options = take_options(options, HTTP_OPTIONS)

        async def connect(client: Client) -> trio.abc.Stream:
            stream = HttpStream(
                url, headers=headers, auth=auth, open_url=open_url, **transport_options
            )
            client._stream_tasks = stream.run
            return stream

        return cls._later(connect, options)

    # -------------------------------------------------------------- lifetime

    async def __aenter__(self) -> Client:
        if self._loop is not None:
            raise RuntimeError("a Client can be entered only once")
        if self._connect is not None:
            self._stream = await self._connect()
        assert self._stream is not None
        self._loop = loop = _Loop(
            self.session,
            self._stream,
            self._on_notification,
            shield=True,
            max_write_buffer=self._max_write_buffer,
            write_timeout=self._write_timeout,
        )
        self._nursery_cm = trio.open_nursery()
        self._nursery = nursery = await self._nursery_cm.__aenter__()
        try:
            if self._stream_tasks is not None:
                await nursery.start(self._run_stream_tasks)
            await nursery.start(loop.run)
            process = self.process
            if process is not None and process.stderr is not None:
                nursery.start_soon(self._capture, process.stderr)
            else:
                self._stderr_done.set()
            loop.run_actions(self.session.open(trio.current_time()))
            await loop.opened.wait()
            if not self.session.is_open:
                error = loop.open_error
                failure = None if error is None else authorization_failure(self._stream, error)
                if failure is not None:
                    raise failure from failure.__cause__  # a failed authorization: its error
                raise error or ConnectionLost("the server closed while opening")
        except BaseException as exc:
            await self.__aexit__(type(exc), exc, exc.__traceback__)
            raise
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        nursery_cm, self._nursery_cm = self._nursery_cm, None
        if nursery_cm is None:
            return
        self._closed = True
        loop = self._loop
        assert loop is not None
        assert self._nursery is not None
        assert self._stream is not None
        # The session decides what closing means: calls in flight fail, jobs are cancelled.
        loop.run_actions(self.session.close("the client is closed"))
        try:
            with trio.CancelScope(shield=True):
                await self._shutdown(loop)
        finally:
            loop.scope.cancel()
            self._stream_scope.cancel()
            self._stderr_scope.cancel()
            self._nursery.cancel_scope.cancel()
            try:
                # An error of our own tasks comes out here; the body's exception propagates.
                await nursery_cm.__aexit__(None, None, None)
            finally:
                with trio.CancelScope(shield=True):
                    await self._stream.aclose()
                    process = self.process
                    if process is not None:
                        if process.returncode is None:  # _shutdown was interrupted
                            process.kill()
                        await process.wait()
                        if process.stderr is not None:
                            await process.stderr.aclose()

    async def _shutdown(self, loop: _Loop) -> None:
        timeout = self.shutdown_timeout
        with trio.move_on_after(timeout):
            await loop.flush()
        process = self.process
        if process is None:
            return
        if isinstance(self._stream, trio.abc.HalfCloseableStream):
            with contextlib.suppress(*_GONE):
                await self._stream.send_eof()  # closes the server's stdin
        for stop in (None, process.terminate, process.kill):
            if stop is not None:
                stop()
            with trio.move_on_after(timeout if stop is not process.kill else math.inf):
                await process.wait()
            if process.returncode is not None:
                break
        # Take in the rest of the server's stdout (and captured stderr), up to their ends.
        with trio.move_on_after(timeout):
            await loop.reader_done.wait()
            await self._stderr_done.wait()

    async def _run_stream_tasks(self, *, task_status: trio.TaskStatus[None]) -> None:
        assert self._stream_tasks is not None
        with self._stream_scope:
            await self._stream_tasks(task_status=task_status)

    async def _capture(self, stderr: trio.abc.ReceiveStream) -> None:
        with self._stderr_scope:
            try:
                async for chunk in stderr:
                    self._stderr += chunk
                    del self._stderr[:-_STDERR_TAIL]
            except _GONE:
                pass
        self._stderr_done.set()

    # -------------------------------------------------------------- properties

    @property
    def stderr(self) -> bytes:
        """The end of the server's stderr (with ``stderr=subprocess.PIPE``)."""
        return bytes(self._stderr)

    @property
    def closed(self) -> bool:
        """Whether the connection is closed (by us or by the server), or broken."""
        loop = self._loop
        return (
            self._closed or self.session.closed or (loop is not None and loop.failure is not None)
        )

    # -------------------------------------------------------------- requests

    # The hooks of AsyncClientMethods (request, notify and the convenience calls).

    def _check_open(self) -> None:
        loop = self._loop
        if loop is None:
            raise RuntimeError("enter the Client (async with) before making requests")
        if self._closed:
            raise ConnectionLost("the client is closed")
        if loop.failure is not None:
            raise ConnectionLost(loop.failure)

    def _now(self) -> float:
        return trio.current_time()

    async def _send_call(self, call: Call, data: bytes) -> Any:
        assert self._loop is not None
        self._loop.write(data)
        try:
            return await self._loop.wait(call)
        except McpError as exc:
            failure = authorization_failure(self._stream, exc)
            if failure is None:
                raise
            raise failure from failure.__cause__  # a failed authorization: its error

    async def _send(self, data: bytes) -> None:
        assert self._loop is not None
        self._loop.write(data)
        await trio.lowlevel.checkpoint()
