"""The loopback redirect of an authorization flow, for the command line:
:class:`LoopbackRedirect`.

A native application takes the authorization server's redirect on a loopback address
(RFC 8252 section 7.3; OAuth 2.1 section 8.4.2: "loopback interface redirect URIs use the
"http" scheme"): it listens on ``127.0.0.1`` (port 0: any free one), its
:attr:`~LoopbackRedirect.redirect_uri` goes into the flow, and :meth:`~LoopbackRedirect.wait`
takes exactly one ``GET`` of that path, answers it with a small HTML page and returns the
full URL the browser was redirected to (the flow checks its ``state``, ``iss`` and code).
Other paths (a browser's ``/favicon.ico``) get 404 and are not counted; bounded: each
request's head at :data:`MAX_REQUEST` bytes and :data:`REQUEST_TIMEOUT` seconds, the whole
wait at ``timeout`` seconds.

With blocking sockets: from asyncio or trio, pass the instance as ``open_url=`` all the
same (a plain callable runs in a worker thread there).

The command line's use of it is ``mcp_sansio._cli_auth``.
"""

from __future__ import annotations

import contextlib
import html
import socket
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import parse_qs, urlsplit

from ..auth._errors import AuthError

if TYPE_CHECKING:
    import h11

__all__ = [
    "DEFAULT_REDIRECT_TIMEOUT",
    "MAX_REQUEST",
    "REQUEST_TIMEOUT",
    "LoopbackRedirect",
]

#: How long :meth:`LoopbackRedirect.wait` waits for the redirect, in seconds.
DEFAULT_REDIRECT_TIMEOUT: Final = 300.0
#: The largest request head read, in bytes.
MAX_REQUEST: Final = 16 * 1024
#: How long one connection may take to send its request head, in seconds.
REQUEST_TIMEOUT: Final = 10.0

_PAGE: Final = (
    "<!doctype html><html><head><meta charset='utf-8'><title>{title}</title></head>"
    "<body><h1>{title}</h1><p>{text}</p></body></html>"
)


class LoopbackRedirect:
    """Listen on ``host`` (a loopback address) and ``port`` for the redirect of one
    authorization flow; the socket is bound at once (so :attr:`redirect_uri` is known),
    and closed by :meth:`close` (or leaving the ``with``).

    As an ``open_url`` handler (``connect_http(..., open_url=redirect)``), a call with the
    authorization URL hands it to ``announce`` (print it, open a browser; by default
    nothing) and returns :meth:`wait`'s URL.

    :param port: the port (0: a free one).
    :param path: the redirect URI's path.
    :param host: a loopback address (``127.0.0.1`` or ``::1``).
    :param timeout: how long :meth:`wait` waits, in seconds.
    :param announce: called with the authorization URL before waiting.
    """

    def __init__(
        self,
        port: int = 0,
        *,
        path: str = "/callback",
        host: str = "127.0.0.1",
        timeout: float = DEFAULT_REDIRECT_TIMEOUT,
        announce: Callable[[str], Any] | None = None,
    ) -> None:
        if host not in ("127.0.0.1", "::1"):
            raise ValueError(f"the redirect listens on a loopback address, not {host!r}")
        if not path.startswith("/"):
            raise ValueError("the redirect path starts with '/'")
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self._sock = socket.create_server((host, port), family=family)
        self.port: int = self._sock.getsockname()[1]
        """The port listened on."""
        self.path = path
        """The redirect URI's path."""
        self.timeout = timeout
        """How long :meth:`wait` waits, in seconds."""
        self.announce = announce
        """What a call does with the authorization URL before waiting."""
        shown = f"[{host}]" if ":" in host else host
        self._origin = f"http://{shown}:{self.port}"
        self.redirect_uri = self._origin + path
        """The redirect URI to register and send (``http://127.0.0.1:PORT/callback``)."""

    def __enter__(self) -> LoopbackRedirect:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop listening."""
        self._sock.close()

    def __call__(self, url: str) -> str:
        """The ``open_url`` handler: ``announce(url)``, then :meth:`wait`."""
        if self.announce is not None:
            self.announce(url)
        return self.wait()

    def wait(self, timeout: float | None = None) -> str:
        """Take the one ``GET`` of :attr:`path` and return its full URL; raises
        :class:`~mcp_sansio.auth.AuthError` (step ``"authorization response"``) when none
        comes within ``timeout`` (default :attr:`timeout`) seconds."""
        limit = self.timeout if timeout is None else timeout
        deadline = time.monotonic() + limit
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AuthError(
                    f"no redirect to {self.redirect_uri} within {limit:g} s"
                    " (was the authorization finished in the browser?)",
                    step="authorization response",
                )
            self._sock.settimeout(left)
            try:
                conn, _ = self._sock.accept()
            except TimeoutError:
                continue
            with conn:
                target = self._take(conn, min(REQUEST_TIMEOUT, max(0.001, left)))
            if target is not None:
                return self._origin + target

    def _take(self, conn: socket.socket, timeout: float) -> str | None:
        """Serve one connection: the target of the redirect's GET, or None."""
        import h11  # (the http extra; the command line's parser needs none of it)

        h = h11.Connection(h11.SERVER, max_incomplete_event_size=MAX_REQUEST)
        conn.settimeout(timeout)
        try:
            while True:
                event = h.next_event()
                if event is h11.NEED_DATA:
                    h.receive_data(conn.recv(MAX_REQUEST))
                    continue
                if not isinstance(event, h11.Request):
                    return None
                target = event.target.decode("ascii", "replace")
                if event.method != b"GET":
                    self._answer(conn, h, 405, "Not allowed", "Only GET is taken here.")
                    return None
                if urlsplit(target).path != self.path:
                    self._answer(conn, h, 404, "Not found", "This is not the redirect.")
                    return None
                query = parse_qs(urlsplit(target).query)
                if "error" in query:
                    title, text = "Authorization refused", "You may close this window."
                else:
                    title = "Authorization received"
                    text = "You may close this window and return to the terminal."
                self._answer(conn, h, 200, title, text)
                return target
        except (OSError, h11.ProtocolError):
            return None

    @staticmethod
    def _answer(conn: socket.socket, h: h11.Connection, status: int, title: str, text: str) -> None:
        import h11

        body = _PAGE.format(title=html.escape(title), text=html.escape(text)).encode()
        headers = [
            ("Content-Type", "text/html; charset=utf-8"),
            ("Content-Length", str(len(body))),
            ("Cache-Control", "no-store"),
            ("Connection", "close"),
        ]
        with contextlib.suppress(OSError, h11.ProtocolError):
            data = h.send(h11.Response(status_code=status, headers=headers)) or b""
            data += h.send(h11.Data(data=body)) or b""
            data += h.send(h11.EndOfMessage()) or b""
            conn.sendall(data)
