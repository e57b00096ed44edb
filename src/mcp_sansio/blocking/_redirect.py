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

:func:`command_line_auth` is the command line's choice of a
:class:`~mcp_sansio.auth.ClientAuth` (``mcp-sansio call`` and ``probe`` with ``--http``): a
token given (``mcp_sansio.auth.BearerToken``), a pre-registered client, or the
interactive authorization code flow (:class:`~mcp_sansio.auth.OAuthClient` registering
itself), whose person step prints the URL, opens a browser (:mod:`webbrowser`) and takes
the redirect here.
"""

from __future__ import annotations

import argparse
import contextlib
import html
import os
import socket
import sys
import time
import webbrowser
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Final, TextIO
from urllib.parse import parse_qs, urlsplit

from ..auth._client_auth import ClientAuth, Flow
from ..auth._errors import AuthError
from ..auth._flow import Authorized
from ..auth._metadata import PROFILES
from ..auth._oauth import ClientInfo
from ..auth._oauth_client import OAuthClient
from ..auth._static import BearerToken

if TYPE_CHECKING:
    import h11

__all__ = [
    "DEFAULT_REDIRECT_TIMEOUT",
    "MAX_REQUEST",
    "REQUEST_TIMEOUT",
    "TOKEN_VARIABLE",
    "LoopbackRedirect",
    "add_auth_arguments",
    "auth_from_arguments",
    "check_auth_arguments",
    "command_line_auth",
]

#: The environment variable the command line reads a bearer token from.
TOKEN_VARIABLE: Final = "MCP_SANSIO_TOKEN"

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


def auth_version(versions: Sequence[str] | None) -> str:
    """The protocol version whose authorization text the command line's flows follow: the
    first of ``versions`` that has one, else the newest that does."""
    for version in versions or ():
        if version in PROFILES:
            return version
    return max(PROFILES)


class _Browser:
    """The command line's person step: print the URL, open a browser, take the redirect on
    the loopback (bound at the first challenge: nothing listens unless a flow needs it)."""

    def __init__(self, port: int, timeout: float, err: TextIO) -> None:
        self._port = port
        self._timeout = timeout
        self._err = err
        self.redirect: LoopbackRedirect | None = None

    def bind(self) -> str:
        if self.redirect is None:
            self.redirect = LoopbackRedirect(
                self._port, timeout=self._timeout, announce=self._announce
            )
        return self.redirect.redirect_uri

    def _announce(self, url: str) -> None:
        self._err.write(f"To authorize, open this URL in a browser:\n  {url}\n")
        self._err.flush()
        with contextlib.suppress(Exception):  # no browser here: the URL is printed
            webbrowser.open(url)

    def __call__(self, url: str) -> str:
        self.bind()
        assert self.redirect is not None
        return self.redirect(url)

    def close(self) -> None:
        if self.redirect is not None:
            self.redirect.close()


class _Interactive:
    """An :class:`~mcp_sansio.auth.OAuthClient` made at the first challenge (when the
    redirect URI, on a port bound then, is known)."""

    def __init__(self, make: Callable[[str], OAuthClient], browser: _Browser) -> None:
        self._make = make
        self._browser = browser
        self.client: OAuthClient | None = None

    def __repr__(self) -> str:
        return "<the command line's OAuth client>"

    def headers(self, method: str, url: str, *, now: float) -> Sequence[tuple[str, str]]:
        return () if self.client is None else self.client.headers(method, url, now=now)

    def challenged(
        self, status: int, headers: Sequence[tuple[str, str]], *, now: float
    ) -> Flow | None:
        if self.client is None:
            self.client = self._make(self._browser.bind())
        return self.client.challenged(status, headers, now=now)

    def authorized(self, result: Authorized, *, now: float) -> None:
        assert self.client is not None
        self.client.authorized(result, now=now)


def command_line_auth(
    url: str,
    *,
    token: str | None = None,
    client_id: str | None = None,
    client_secret: str | None = None,
    interactive: bool = False,
    versions: Sequence[str] | None = None,
    redirect_port: int = 0,
    timeout: float = DEFAULT_REDIRECT_TIMEOUT,
    err: TextIO,
) -> tuple[ClientAuth | None, Callable[[str], str] | None, Callable[[], None]]:
    """The command line's authorization for the MCP server at ``url``: the
    :class:`~mcp_sansio.auth.ClientAuth`, the ``open_url`` handler, and what to call when
    done (it closes the loopback listener).

    - ``token``: ``mcp_sansio.auth.BearerToken`` (no flow, no handler);
    - ``client_id`` (and ``client_secret``, a confidential client): an
      :class:`~mcp_sansio.auth.OAuthClient` with that pre-registered identity;
    - else, with ``interactive``: an :class:`~mcp_sansio.auth.OAuthClient` that registers
      itself (a Client ID Metadata Document is not offered: Dynamic Client Registration,
      as ``mcp-sansio``);
    - else nothing (a 401 fails the request).

    The flows follow the authorization text of :func:`auth_version` (``versions``); the
    person step prints the authorization URL on ``err``, opens a browser and takes the
    redirect on ``127.0.0.1:redirect_port`` (0: any free port), waiting ``timeout``
    seconds at most.
    """
    if token is not None:
        return BearerToken(token), None, lambda: None
    if client_id is None and not interactive:
        return None, None, lambda: None
    version = auth_version(versions)
    client = None if client_id is None else ClientInfo(client_id, client_secret)
    browser = _Browser(redirect_port, timeout, err)

    def make(redirect_uri: str) -> OAuthClient:
        if client is not None:
            return OAuthClient(url, version=version, redirect_uri=redirect_uri, client=client)
        return OAuthClient(
            url, version=version, redirect_uri=redirect_uri, client_name="mcp-sansio"
        )

    return _Interactive(make, browser), browser, browser.close


def add_auth_arguments(parser: argparse.ArgumentParser) -> None:
    """The authorization options of ``mcp-sansio call`` and ``probe`` (with ``--http``)."""
    group = parser.add_argument_group(
        "authorization (with --http)",
        "By default, when the server answers 401 and this runs in a terminal, the "
        "authorization code flow runs: the URL to open is printed (and a browser opened), "
        "the redirect taken on 127.0.0.1. The whole --timeout bounds it too.",
    )
    group.add_argument(
        "--token",
        metavar="TOKEN",
        help=f"a bearer token to send (default: the environment variable {TOKEN_VARIABLE}; "
        "prefer it: a command line is visible to other users)",
    )
    group.add_argument(
        "--client-id", metavar="ID", help="a client pre-registered with the authorization server"
    )
    group.add_argument(
        "--client-secret",
        metavar="SECRET",
        help="its secret, for a confidential client (with --client-id)",
    )
    group.add_argument(
        "--interactive",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="run the flow when challenged, registering the client (default: when stdin "
        "and stderr are terminals)",
    )
    group.add_argument(
        "--redirect-port",
        type=int,
        default=0,
        metavar="PORT",
        help="the loopback port of the redirect URI (default: any free one)",
    )


def auth_from_arguments(
    args: argparse.Namespace, url: str, err: TextIO, timeout: float = DEFAULT_REDIRECT_TIMEOUT
) -> tuple[ClientAuth | None, Callable[[str], str] | None, Callable[[], None]]:
    """:func:`command_line_auth` from the options of :func:`add_auth_arguments`."""
    token = args.token if args.token is not None else os.environ.get(TOKEN_VARIABLE) or None
    interactive = args.interactive
    if interactive is None:
        stdin = getattr(sys.stdin, "isatty", None)
        interactive = bool(stdin and stdin() and err.isatty())
    return command_line_auth(
        url,
        token=token,
        client_id=args.client_id,
        client_secret=args.client_secret,
        interactive=interactive,
        versions=getattr(args, "versions", None),
        redirect_port=args.redirect_port,
        timeout=timeout,
        err=err,
    )


def check_auth_arguments(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Refuse the authorization options without ``--http``, and contradictory ones."""
    given = [
        name
        for name, value in (
            ("--token", args.token),
            ("--client-id", args.client_id),
            ("--client-secret", args.client_secret),
        )
        if value is not None
    ]
    if given and not args.http:
        parser.error(f"{given[0]} is for an HTTP server (--http URL)")
    if args.token is not None and args.client_id is not None:
        parser.error("give --token or --client-id, not both")
    if args.client_secret is not None and args.client_id is None:
        parser.error("--client-secret goes with --client-id")
    if not 0 <= args.redirect_port <= 65535:
        parser.error("--redirect-port is 0 to 65535")
