"""The blocking Client."""

from __future__ import annotations

import os
import socket
import subprocess
from collections.abc import Callable, Iterable, Mapping, Sequence
from types import TracebackType
from typing import IO, Any

from .._backpressure import write_options
from ..auth._client_auth import ClientAuth
from ..http._client_auth import authorization_failure
from ..session import (
    DEFAULT_MAX_INPUT_ROUNDS,
    DEFAULT_PROBE_TIMEOUT,
    DEFAULT_TIMEOUT,
    Call,
    ClientSession,
    ClientView,
    ConnectionLost,
    McpError,
    carry_out,
)
from ..session._client_api import SyncClientMethods
from ..session._options import h11_missing, take_options
from ._endpoint import _Endpoint
from ._streams import (
    DEFAULT_SHUTDOWN_TIMEOUT,
    NotificationCallback,
    ProcessStream,
    SocketStream,
    Stream,
    _clock,
)

# ---------------------------------------------------------------------- client


class Client(SyncClientMethods, _Endpoint, ClientView):
    """An MCP client over a :class:`Stream`; the session is open when the constructor
    returns (``server/discover`` or ``initialize``, with the fallback between eras). The
    client owns the stream: it closes it if opening fails, and in :meth:`close`.

    Use :meth:`connect_stdio`, :meth:`connect_tcp` or :meth:`connect_unix` for the usual
    transports; all are context managers. One call at a time (see the module docs).

    :param stream: the connection to the server.
    :param versions: the protocol versions to speak, newest first (default: all; both eras
        means a ``server/discover`` probe that falls back to ``initialize``).
    :param handlers: sync functions ``fn(context, params) -> result dict`` for the server's
        requests: ``"sampling/createMessage"``, ``"elicitation/create"``, ``"roots/list"``
        (in 2026-07-28 they answer ``input_required`` rounds too). They declare the
        client's capabilities, unless ``capabilities`` is given.
    :param capabilities: the client capabilities, as in the specification's JSON.
    :param client_info: ``clientInfo`` (``{"name", "version"}``).
    :param timeout: the default timeout of each request, in seconds (``None``: none);
        also the opening's.
    :param probe_timeout: how long the ``server/discover`` probe may take.
    :param max_input_rounds: the bound on ``input_required`` rounds of one call.
    :param on_notification: called with each notification from the server (logs, list
        changes, resource updates, …), while the client pumps the connection.
    :param max_write_buffer: the bound, in bytes, on what waits to be written to the server
        (:data:`DEFAULT_MAX_WRITE_BUFFER`, 1 MiB): past it, the client only writes (reads
        nothing) until it is down to half.
    :param write_timeout: when the server takes none of what waits to be written for this
        many seconds (:data:`DEFAULT_WRITE_TIMEOUT`, 30 s; ``None``: no limit), the
        connection is closed as broken: the call fails with :class:`ConnectionLost`
        (``"the server stopped reading: N bytes unwritten for T s ..."``).
    :param config: more :class:`~mcp_sansio.Connection` options (``max_message_size=``, …).
    """

    session: ClientSession
    """The sans-IO session underneath."""

    def __init__(
        self,
        stream: Stream,
        *,
        versions: Iterable[str] | None = None,
        handlers: Mapping[str, Callable[..., Any]] | None = None,
        capabilities: Mapping[str, Any] | None = None,
        client_info: Mapping[str, Any] | None = None,
        timeout: float | None = DEFAULT_TIMEOUT,
        probe_timeout: float = DEFAULT_PROBE_TIMEOUT,
        max_input_rounds: int = DEFAULT_MAX_INPUT_ROUNDS,
        on_notification: NotificationCallback | None = None,
        **config: Any,
    ) -> None:
        try:
            limit, write_timeout = write_options(config)
            session = ClientSession(
                versions=versions,
                handlers=handlers,
                capabilities=capabilities,
                client_info=client_info,
                timeout=timeout,
                probe_timeout=probe_timeout,
                max_input_rounds=max_input_rounds,
                **config,
            )
            super().__init__(
                session,
                stream,
                on_notification,
                max_write_buffer=limit,
                write_timeout=write_timeout,
            )
            self._closed = False
            self._open()
        except BaseException:
            stream.close()
            raise

    def _open(self) -> None:
        try:
            self._opening()
        except McpError as exc:
            failure = authorization_failure(self.stream, exc)
            if failure is None:
                raise
            raise failure from failure.__cause__  # a failed authorization: its error

    def _opening(self) -> None:
        session = self.session
        self._carry_out(session.open(_clock()))
        opening = session.opening
        while not session.is_open:
            opening = session.opening or opening
            if session.opening is None or opening is None or opening.error is not None:
                break
            if self._eof:
                raise self._failure or ConnectionLost("the server closed while opening")
            self._pump()
        if not session.is_open:
            if opening is not None and opening.error is not None:
                raise opening.error
            raise self._failure or ConnectionLost("the session did not open")

    # ------------------------------------------------------------------ constructors

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
        """Spawn the server ``command`` and talk to it over its stdin and stdout.

        :param env: the child's whole environment (default: ours).
        :param cwd: the child's working directory.
        :param stderr: where the child's stderr goes: ``None`` (default) passes it through
            to ours; a file (``tempfile.TemporaryFile()``, an open log) or a descriptor
            captures it; ``subprocess.DEVNULL`` drops it. ``subprocess.PIPE`` is refused:
            nothing would read it and the child would block once it fills.
        :param shutdown_timeout: each wait of the shutdown (see :class:`ProcessStream`).
        :param options: the keywords of :class:`Client`.
        """
        if stderr == subprocess.PIPE:
            raise ValueError("stderr=PIPE would block the server; pass a file instead")
        process = subprocess.Popen(
            list(command),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr,
            env=None if env is None else dict(env),
            cwd=cwd,
            bufsize=0,
        )
        return cls(ProcessStream(process, shutdown_timeout=shutdown_timeout), **options)

    @classmethod
    def connect_tcp(
        cls, host: str, port: int, *, connect_timeout: float | None = 10.0, **options: Any
    ) -> Client:
        """Connect to a server listening on TCP ``host``:``port``."""
        sock = socket.create_connection((host, port), timeout=connect_timeout)
        return cls(SocketStream(sock), **options)

    @classmethod
    def connect_unix(cls, path: str | os.PathLike[str], **options: Any) -> Client:
        """Connect to a server listening on the Unix socket ``path``."""
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.connect(os.fspath(path))
        except BaseException:
            sock.close()
            raise
        return cls(SocketStream(sock), **options)

    @classmethod
    def connect_http(
        cls,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        auth: ClientAuth | None = None,
        open_url: Callable[[str], str] | None = None,
        **options: Any,
    ) -> Client:
        """Connect to a server's Streamable HTTP endpoint, e.g.
        ``"http://127.0.0.1:8000/mcp"`` (``https://`` uses TLS with the system's default
        context, or ``ssl=``). Needs ``h11`` (the ``http`` extra).

        Each message is POSTed on a connection from a small keep-alive pool by a worker
        thread, at most ``max_workers`` at once (an answer that comes as an event stream
        holds its thread until it ends: see ``mcp_sansio.blocking._http_client``); the
        client itself still makes one call at a time, pumping what the responses carry.
        HTTP failures reach the calls as :class:`McpError`. In the initialize era the
        session id and protocol version go with every request, and a ``DELETE`` ends the
        session on :meth:`close`.

        :param headers: extra headers sent with every request (``Authorization``…).
        :param auth: a :class:`~mcp_sansio.auth.ClientAuth` that authorizes every request
            (such as ``mcp_sansio.auth.BearerToken``): its headers go with each one,
            and a 401 or 403 is handed to it; a flow it starts is run (its HTTP requests to
            any origin, ``https://`` with ``ssl=``) and the request sent again. A call (or
            the opening) that the flow fails raises the flow's
            :class:`~mcp_sansio.auth.AuthError`. The call's ``timeout`` counts the time the
            flow takes.
        :param open_url: the handler of a flow's person step: ``open_url(url)`` returns the
            URL the browser was redirected to (for the command line: a
            :class:`~mcp_sansio.blocking.LoopbackRedirect`, which takes the redirect on 127.0.0.1).
            Without it a flow that needs a person fails.
        :param options: the transport's keywords ``max_body_size=`` (bytes, default 64 MiB),
            ``max_reconnects=``, ``default_retry_ms=``, ``listen=`` (open the standalone GET
            stream; off by default), ``reopen=`` (start a new session when the server answers
            404 to the session id; on by default), ``expired_statuses=`` (the statuses that
            mean it expired: ``(404,)``; ``(404, 400)`` for servers that answer 400),
            ``max_idle=``, ``ssl=``, ``close_timeout=``,
            ``max_workers=`` (default 8), ``connect_timeout=`` (seconds, default 10; see
            ``mcp_sansio.blocking._http_client.HttpStream``); the others as for
            :class:`Client`.
        """
        try:
            from ._http_client import HTTP_OPTIONS, HttpStream
        except ImportError as exc:  # pragma: no cover - h11 missing
            raise h11_missing() from exc
        transport_options = take_options(options, HTTP_OPTIONS)
        stream = HttpStream(url, headers=headers, auth=auth, open_url=open_url, **transport_options)
        return cls(stream, **options)

    # ------------------------------------------------------------------ lifetime

    def close(self) -> None:
        """Close the connection (for a stdio server: its shutdown sequence), after writing
        what waits to be written (for at most the stream's ``shutdown_timeout``, 2 s by
        default). Idempotent."""
        if not self._closed:
            self._closed = True
            try:
                # The one shutdown (SessionBase.close): calls in flight fail, jobs cancelled.
                carry_out(self.session.close("the client is closed"), self)
                if self._outbox:
                    timeout = getattr(self.stream, "shutdown_timeout", DEFAULT_SHUTDOWN_TIMEOUT)
                    self._drain(0, until=_clock() + timeout)
            finally:
                self.stream.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    @property
    def closed(self) -> bool:
        """Whether the connection is closed (by us, or by the server)."""
        return self._closed or self._eof

    @property
    def process(self) -> subprocess.Popen[bytes] | None:
        """The server's process, for a client made by :meth:`connect_stdio`."""
        return self.stream.process if isinstance(self.stream, ProcessStream) else None

    # ------------------------------------------------------------------ what was negotiated

    # ------------------------------------------------------------------ calls

    # The hooks of SyncClientMethods (request, notify and the convenience calls).

    def _check_open(self) -> None:
        if self._closed:
            raise ConnectionLost("the client is closed")
        if self._failure is not None:
            raise self._failure

    def _now(self) -> float:
        return _clock()

    def _send_call(self, call: Call, data: bytes) -> Any:
        self._write(data)
        try:
            return self._wait(call)
        except McpError as exc:
            failure = authorization_failure(self.stream, exc)
            if failure is None:
                raise
            raise failure from failure.__cause__  # a failed authorization: its error

    def _send(self, data: bytes) -> None:
        self._write(data)

    def poll(self, timeout: float = 0.0) -> bool:
        """Handle what the server sent (notifications, requests), waiting up to ``timeout``
        seconds for something to arrive. Returns whether anything did; ``False`` as well
        once the connection is closed."""
        if self._closed:
            return False
        return self._pump(until=_clock() + timeout)
