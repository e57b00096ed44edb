"""The command line's authorization (``mcp-sansio call`` and ``probe`` with ``--http``):
its options (:func:`add_auth_arguments`, :func:`check_auth_arguments`) and the
:class:`~mcp_sansio.auth.ClientAuth` they choose (:func:`command_line_auth`): a token given
(``mcp_sansio.auth.BearerToken``), the client credentials grant of a pre-registered client
(:class:`~mcp_sansio.auth.GrantAuth`, no person), a pre-registered client's authorization
code flow, or the interactive one (:class:`~mcp_sansio.auth.OAuthClient` registering
itself), whose person step prints the URL, opens a browser (:mod:`webbrowser`) and takes
the redirect with :class:`~mcp_sansio.blocking.LoopbackRedirect`.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import webbrowser
from collections.abc import Callable, Sequence
from typing import Any, Final, TextIO

from .auth._client_auth import ClientAuth, Flow
from .auth._dpop import signing_key
from .auth._errors import AuthUsageError
from .auth._flow import Authorized
from .auth._grants import ClientCredentials, GrantAuth
from .auth._metadata import PROFILES
from .auth._oauth import ClientInfo
from .auth._oauth_client import OAuthClient
from .auth._static import BearerToken
from .blocking._redirect import DEFAULT_REDIRECT_TIMEOUT, LoopbackRedirect

__all__ = [
    "SECRET_VARIABLE",
    "TOKEN_VARIABLE",
    "add_auth_arguments",
    "auth_from_arguments",
    "auth_version",
    "check_auth_arguments",
    "command_line_auth",
]

#: The environment variable the command line reads a bearer token from.
TOKEN_VARIABLE: Final = "MCP_SANSIO_TOKEN"

#: The environment variable the command line reads a client secret from.
SECRET_VARIABLE: Final = "MCP_SANSIO_CLIENT_SECRET"


def _read_key(path: str) -> str | dict[str, Any]:
    """``--client-key FILE``: the file's text (a PEM), or the JWK its JSON holds."""
    try:
        with open(path, encoding="utf-8") as file:
            text = file.read(_MAX_KEY_FILE + 1)
    except (OSError, UnicodeDecodeError) as exc:
        raise argparse.ArgumentTypeError(f"cannot read {path}: {exc}") from None
    if len(text) > _MAX_KEY_FILE:
        raise argparse.ArgumentTypeError(f"{path} is over {_MAX_KEY_FILE} characters: no key")
    if text.lstrip().startswith("{"):
        try:
            jwk = json.loads(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{path} is not JSON (a JWK) nor a PEM") from None
        if not isinstance(jwk, dict):
            raise argparse.ArgumentTypeError(f"{path} holds no JWK (a JSON object)")
        return jwk
    return text


#: The largest key file read (an RSA 8192-bit private key in PEM is under 7,000 characters).
_MAX_KEY_FILE: Final = 65536


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

    def answered(self, status: int, headers: Sequence[tuple[str, str]], *, now: float) -> None:
        if self.client is not None:
            self.client.answered(status, headers, now=now)

    def authorized(self, result: Authorized, *, now: float) -> None:
        assert self.client is not None
        self.client.authorized(result, now=now)


def command_line_auth(
    url: str,
    *,
    token: str | None = None,
    client_id: str | None = None,
    client_secret: str | None = None,
    client_credentials: bool = False,
    client_key: str | dict[str, Any] | None = None,
    client_key_alg: str = "ES256",
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
    - ``client_credentials`` (with ``client_id``): a :class:`~mcp_sansio.auth.GrantAuth`
      running the client credentials grant (the OAuth Client Credentials extension), which
      needs no person: with ``client_secret``, or with ``client_key`` (a private PEM or JWK)
      a ``private_key_jwt`` assertion signed by ``client_key_alg``;
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
    if client_credentials:
        if client_id is None:
            raise AuthUsageError("the client credentials grant needs a client_id")
        grant = ClientCredentials(
            client_id,
            client_secret=client_secret,
            private_key=client_key,
            algorithm=client_key_alg,
        )
        return GrantAuth(url, grant, version=version), None, lambda: None
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
        help="its secret, for a confidential client (with --client-id; default: the "
        f"environment variable {SECRET_VARIABLE}; prefer it)",
    )
    group.add_argument(
        "--client-credentials",
        action="store_true",
        help="with --client-id: get the token with the client credentials grant (the OAuth "
        "Client Credentials extension), no person and no browser; the client authenticates "
        "with its secret, or with --client-key",
    )
    group.add_argument(
        "--client-key",
        metavar="FILE",
        type=_read_key,
        help="with --client-credentials: the client's private key (a PEM or a JWK file), to "
        "authenticate with a private_key_jwt assertion (RFC 7523) instead of a secret; needs "
        "the auth extra (joserfc)",
    )
    group.add_argument(
        "--client-key-alg",
        metavar="ALG",
        default="ES256",
        help="the JWS algorithm the assertion is signed with (default: ES256; RS256 for an "
        "RSA key, EdDSA for an Ed25519 one)",
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
    token = args.token
    if token is None and args.client_id is None:  # an option given outranks the environment
        token = os.environ.get(TOKEN_VARIABLE) or None
    secret = args.client_secret
    if secret is None and args.client_id is not None and args.client_key is None:
        secret = os.environ.get(SECRET_VARIABLE) or None
    interactive = args.interactive
    if interactive is None:
        stdin = getattr(sys.stdin, "isatty", None)
        interactive = bool(stdin and stdin() and err.isatty())
    return command_line_auth(
        url,
        token=token,
        client_id=args.client_id,
        client_secret=secret,
        client_credentials=args.client_credentials,
        client_key=args.client_key,
        client_key_alg=args.client_key_alg,
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
            ("--client-key", args.client_key),
        )
        if value is not None
    ]
    if given and not args.http:
        parser.error(f"{given[0]} is for an HTTP server (--http URL)")
    if args.token is not None and args.client_id is not None:
        parser.error("give --token or --client-id, not both")
    if args.client_secret is not None and args.client_id is None:
        parser.error("--client-secret goes with --client-id")
    if args.client_credentials:
        if not args.http:
            parser.error("--client-credentials is for an HTTP server (--http URL)")
        if args.client_id is None:
            parser.error("--client-credentials needs --client-id")
        if args.interactive:
            parser.error("--client-credentials needs no person: not with --interactive")
        if args.client_key is not None and args.client_secret is not None:
            parser.error("give --client-secret or --client-key, not both")
        if args.client_key is None and (
            args.client_secret is None and not os.environ.get(SECRET_VARIABLE)
        ):
            parser.error(
                f"--client-credentials needs --client-secret (or {SECRET_VARIABLE}) or --client-key"
            )
    elif args.client_key is not None:
        parser.error("--client-key goes with --client-credentials")
    if args.client_key is not None:
        try:
            signing_key(args.client_key, args.client_key_alg)
        except AuthUsageError as exc:
            parser.error(f"--client-key: {exc.reason} (as an {args.client_key_alg} key)")
    if not 0 <= args.redirect_port <= 65535:
        parser.error("--redirect-port is 0 to 65535")
