"""The authorization options of ``mcp-sansio serve --http``: the example server as a
protected resource (docs/auth-server.rst), for trying an OAuth client against it.

With ``--auth-issuer``, every request to ``http://HOST:PORT/mcp`` needs an access token
issued by that authorization server for that resource (its audience), verified with the
issuer's JWKS (``--auth-jwks-url``: JWT access tokens, RFC 9068) or its introspection
endpoint (``--auth-introspection``, RFC 7662); ``--auth-scope`` names the scopes every
request needs; ``--auth-dpop`` takes DPoP-bound tokens (RFC 9449). The protected resource
metadata (RFC 9728) is served at its well-known paths and names the issuer.
"""

from __future__ import annotations

import argparse
import os
from typing import Final

from .auth._dpop_proof import DPoPProofs
from .auth._errors import AuthError
from .auth._introspection import IntrospectionVerifier
from .auth._jwt import JwtVerifier
from .auth._resource import ProtectedResource, ServerAuth, TokenVerifier
from .auth._urls import check_endpoint

__all__ = [
    "INTROSPECTION_SECRET_VARIABLE",
    "add_serve_auth_arguments",
    "check_serve_auth_arguments",
    "serve_auth_from_arguments",
]

#: The environment variable the resource server's introspection secret is read from (a
#: command line is visible to other users).
INTROSPECTION_SECRET_VARIABLE: Final = "MCP_SANSIO_INTROSPECTION_SECRET"
_PATH: Final = "/mcp"


def add_serve_auth_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``mcp-sansio serve`` that require tokens (with ``--http``)."""
    group = parser.add_argument_group(
        "authorization (with --http)",
        "Require an OAuth access token on every request (docs/auth-server.rst). The resource "
        "identifier is http://HOST:PORT/mcp: tokens must name it as their audience.",
    )
    group.add_argument(
        "--auth-issuer",
        metavar="ISSUER",
        help="the authorization server whose tokens are taken (its issuer identifier; the "
        "resource metadata names it)",
    )
    verify = group.add_mutually_exclusive_group()
    verify.add_argument(
        "--auth-jwks-url",
        metavar="URL",
        help="verify JWT access tokens (RFC 9068) with the issuer's keys fetched from URL "
        "(needs joserfc, the auth extra)",
    )
    verify.add_argument(
        "--auth-introspection",
        metavar="URL",
        help="ask the issuer's introspection endpoint (RFC 7662) about each new token",
    )
    group.add_argument(
        "--auth-client-id",
        metavar="ID",
        help="this server's client id at the introspection endpoint (its secret: the "
        f"environment variable {INTROSPECTION_SECRET_VARIABLE})",
    )
    group.add_argument(
        "--auth-scope",
        action="append",
        default=[],
        metavar="SCOPE",
        help="a scope every request needs (403 insufficient_scope without it); repeat for more",
    )
    group.add_argument(
        "--auth-dpop",
        choices=("accepted", "required"),
        help="take DPoP-bound tokens (RFC 9449) with their proofs besides Bearer ones "
        "('accepted'), or only them ('required'); needs joserfc, the auth extra",
    )


def check_serve_auth_arguments(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Refuse the options without ``--http`` or ``--auth-issuer``, and contradictory ones."""
    others = [
        name
        for name, value in (
            ("--auth-jwks-url", args.auth_jwks_url),
            ("--auth-introspection", args.auth_introspection),
            ("--auth-client-id", args.auth_client_id),
            ("--auth-scope", args.auth_scope or None),
            ("--auth-dpop", args.auth_dpop),
        )
        if value is not None
    ]
    if args.auth_issuer is None:
        if others:
            parser.error(f"{others[0]} goes with --auth-issuer")
        return
    if args.http is None:
        parser.error("--auth-issuer is for an HTTP server (--http HOST:PORT)")
    if args.http[1] == 0:
        parser.error("--auth-issuer needs a port: the resource identifier names it")
    if args.auth_jwks_url is None and args.auth_introspection is None:
        parser.error("--auth-issuer needs --auth-jwks-url or --auth-introspection")
    if args.auth_introspection is None:
        if args.auth_client_id is not None:
            parser.error("--auth-client-id goes with --auth-introspection")
    elif args.auth_client_id is None or not os.environ.get(INTROSPECTION_SECRET_VARIABLE):
        # RFC 7662 section 2.1: the endpoint "MUST also require some form of authorization"
        parser.error(
            "--auth-introspection needs --auth-client-id, and its secret in "
            f"{INTROSPECTION_SECRET_VARIABLE}"
        )
    try:
        check_endpoint(args.auth_issuer, "the issuer", "usage")
        serve_auth_from_arguments(args)
    except (AuthError, ImportError) as exc:
        parser.error(str(exc))


def serve_auth_from_arguments(args: argparse.Namespace) -> ServerAuth | None:
    """The :class:`~mcp_sansio.auth.ServerAuth` the options ask for, or ``None`` (no
    ``--auth-issuer``). Raises :class:`~mcp_sansio.auth.AuthError` for a bad URL, and
    :class:`ImportError` for ``--auth-jwks-url`` without joserfc."""
    if args.auth_issuer is None:
        return None
    host, port = args.http
    scopes = tuple(args.auth_scope)
    resource = ProtectedResource(
        f"http://{host}:{port}{_PATH}",
        (args.auth_issuer,),
        scopes_supported=scopes or None,
        required_scopes=scopes,
    )
    verifier: TokenVerifier
    if args.auth_jwks_url is not None:
        try:
            verifier = JwtVerifier(issuer=args.auth_issuer, jwks_url=args.auth_jwks_url)
        except ImportError:
            raise ImportError(
                "--auth-jwks-url needs joserfc, the auth extra: pip install 'mcp-sansio[auth]'"
            ) from None
    else:
        verifier = IntrospectionVerifier(
            args.auth_introspection,
            client_id=args.auth_client_id,
            client_secret=os.environ.get(INTROSPECTION_SECRET_VARIABLE) or None,
            issuer=args.auth_issuer,
        )
    dpop = None
    if args.auth_dpop is not None:
        dpop = DPoPProofs(required=args.auth_dpop == "required")
    return ServerAuth(resource, verifier, dpop=dpop)
