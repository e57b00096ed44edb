"""The OAuth 2.1 messages of the authorization code flow, each a pure function: PKCE
(RFC 7636, ``S256`` only), the authorization request URL, the token requests
(``authorization_code`` and ``refresh_token``) with client authentication, and the parsers
of the authorization response and the token response.
"""

from __future__ import annotations

import base64
import hashlib
import secrets
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Final
from urllib.parse import SplitResult, parse_qs, quote, urlencode, urlsplit, urlunsplit

import orjson

from ._errors import (
    AuthorizationDeniedError,
    AuthorizationResponseError,
    AuthUsageError,
    IssuerResponseMismatchError,
    StateMismatchError,
    TokenErrorResponse,
    TokenResponseError,
    detail,
)
from ._store import AuthMethod, ClientInfo, Tokens

__all__ = [
    "AuthMethod",
    "ClientInfo",
    "HttpRequest",
    "Pkce",
    "authorization_url",
    "parse_authorization_response",
    "parse_token_response",
    "token_request",
]

#: RFC 7636 section 4.1: unreserved characters, 43 to 128 of them.
_VERIFIER_CHARS: Final = frozenset(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~"
)
_FORM: Final = "application/x-www-form-urlencoded"


@dataclass(frozen=True)
class HttpRequest:
    """An HTTP request for the caller to make; it hands the answer back to the flow."""

    method: str
    """``GET`` or ``POST``."""
    url: str
    """The absolute URL."""
    headers: tuple[tuple[str, str], ...] = ()
    """The headers to send (a ``Basic`` one holds the client secret: never log them)."""
    body: bytes = field(default=b"", repr=False)
    """The body (a token request's holds the code, the verifier or the refresh token)."""

    def __repr__(self) -> str:
        # the Authorization header's value (a client secret) is never shown, nor the body
        shown = tuple(
            (k, "<hidden>" if k.lower() == "authorization" else v) for k, v in self.headers
        )
        return f"HttpRequest(method={self.method!r}, url={self.url!r}, headers={shown!r})"


@dataclass(frozen=True)
class Pkce:
    """A PKCE pair (RFC 7636): the secret ``verifier`` and its ``S256`` ``challenge``."""

    verifier: str = field(repr=False)
    """The code verifier, sent with the token request only."""
    challenge: str
    """``BASE64URL(SHA256(verifier))`` without padding (RFC 7636 section 4.2)."""

    @classmethod
    def make(cls, verifier: str | None = None) -> Pkce:
        """A new pair; ``verifier`` (for tests) must be 43 to 128 unreserved characters.

        RFC 7636 section 4.1: "It is RECOMMENDED that the output of a suitable random
        number generator be used to create a 32-octet sequence. The octet sequence is
        then base64url-encoded to produce a 43-octet URL safe string".
        """
        if verifier is None:
            verifier = secrets.token_urlsafe(32)
        if not 43 <= len(verifier) <= 128 or not set(verifier) <= _VERIFIER_CHARS:
            raise AuthUsageError("a code verifier is 43 to 128 unreserved characters")
        digest = hashlib.sha256(verifier.encode("ascii")).digest()
        return cls(verifier, base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii"))


def authorization_url(
    endpoint: str,
    *,
    client_id: str,
    redirect_uri: str,
    state: str,
    pkce: Pkce,
    resource: str,
    scope: str | None,
) -> str:
    """The authorization request (OAuth 2.1 section 4.1.1) as the URL to open.

    ``response_type=code``, ``client_id``, ``redirect_uri``, ``state``,
    ``code_challenge`` with ``code_challenge_method=S256``, ``resource`` (MCP 2025-06-18
    and later: it "**MUST** be included in both authorization requests and token
    requests"), and ``scope`` when given. The endpoint's own query is kept (RFC 6749
    section 3.1: it "**MUST** be retained when adding additional query parameters").
    """
    params = [
        ("response_type", "code"),
        ("client_id", client_id),
        ("redirect_uri", redirect_uri),
        ("state", state),
        ("code_challenge", pkce.challenge),
        ("code_challenge_method", "S256"),
        ("resource", resource),
    ]
    if scope is not None:
        params.append(("scope", scope))
    parts = urlsplit(endpoint)
    query = urlencode(params, quote_via=quote)
    if parts.query:
        query = f"{parts.query}&{query}"
    return urlunsplit((parts.scheme, parts.netloc, parts.path, query, ""))


def _basic(client_id: str, secret: str) -> str:
    # RFC 6749 section 2.3.1: each encoded with application/x-www-form-urlencoded first
    pair = f"{quote(client_id, safe='')}:{quote(secret, safe='')}"
    return "Basic " + base64.b64encode(pair.encode("utf-8")).decode("ascii")


def token_request(
    endpoint: str,
    grant: Mapping[str, str],
    *,
    client: ClientInfo,
    method: AuthMethod,
    resource: str,
) -> HttpRequest:
    """A POST to the token endpoint with ``grant``'s fields, ``resource`` (RFC 8707
    section 2.2) and the client's authentication (RFC 6749 section 2.3.1:
    ``client_secret_basic`` puts the id and secret in a ``Basic`` header,
    ``client_secret_post`` in the body; ``none`` sends the ``client_id`` alone, as a
    public client must, section 3.2.1)."""
    fields = dict(grant)
    fields["resource"] = resource
    headers = [("Content-Type", _FORM), ("Accept", "application/json")]
    if method == "client_secret_basic":
        assert client.client_secret is not None
        headers.append(("Authorization", _basic(client.client_id, client.client_secret)))
    else:
        fields["client_id"] = client.client_id
        if method == "client_secret_post":
            assert client.client_secret is not None
            fields["client_secret"] = client.client_secret
    body = urlencode(list(fields.items()), quote_via=quote).encode("ascii")
    return HttpRequest("POST", endpoint, tuple(headers), body)


def code_grant(code: str, redirect_uri: str, verifier: str) -> dict[str, str]:
    """The fields of an ``authorization_code`` grant (OAuth 2.1 section 4.1.3)."""
    return {
        "grant_type": "authorization_code",
        "code": code,
        "redirect_uri": redirect_uri,
        "code_verifier": verifier,
    }


def refresh_grant(refresh_token: str, scope: str | None = None) -> dict[str, str]:
    """The fields of a ``refresh_token`` grant (OAuth 2.1 section 4.3.1)."""
    fields = {"grant_type": "refresh_token", "refresh_token": refresh_token}
    if scope is not None:
        fields["scope"] = scope
    return fields


@dataclass(frozen=True)
class AuthorizationCode:
    """A checked authorization response: the code to exchange."""

    code: str = field(repr=False)
    """The authorization code."""
    iss: str | None = None
    """The response's ``iss`` (RFC 9207), when it had one."""


def _single(query: Mapping[str, list[str]], name: str) -> str | None:
    values = query.get(name)
    if values is None:
        return None
    if len(values) != 1:
        # RFC 6749 section 3.1: parameters "MUST NOT be included more than once"
        raise AuthorizationResponseError(f"the redirect has {name!r} more than once")
    return values[0]


def _same_target(pa: SplitResult, pb: SplitResult) -> bool:
    return (pa.scheme.lower(), pa.netloc.lower(), pa.path or "/") == (
        pb.scheme.lower(),
        pb.netloc.lower(),
        pb.path or "/",
    )


def parse_authorization_response(
    redirect: str,
    *,
    redirect_uri: str,
    state: str,
    issuer: str,
    iss_supported: bool,
) -> AuthorizationCode:
    """Check the redirect that ends the person's step, in order:

    1. it goes to ``redirect_uri`` (scheme, host, port and path);
    2. ``state`` is the one sent (MCP: clients "**SHOULD** use and verify state
       parameters ... and discard any results that do not include or have a mismatch
       with the original state");
    3. ``iss`` (RFC 9207 section 2.4, as MCP 2026-07-28's table states it): present, it
       must equal ``issuer`` by simple string comparison, with no normalization ("clients
       **MUST NOT** apply scheme or host case folding..."); absent, the response is
       refused when the metadata set ``authorization_response_iss_parameter_supported``
       ("Clients **MUST** reject authorization responses without the ``iss`` parameter
       from authorization servers that do support the parameter according to the
       client's configuration");
    4. then only an ``error`` is acted on ("on mismatch the client **MUST NOT** act on or
       display ``error``"), else the ``code`` is returned.
    """
    try:
        parts = urlsplit(redirect)
        same = _same_target(parts, urlsplit(redirect_uri))
    except ValueError:  # "Invalid IPv6 URL"
        raise AuthorizationResponseError("the redirect is not a URL") from None
    if not same:
        # neither query nor fragment is shown: either may hold the code
        shown = parts._replace(query="", fragment="").geturl()
        raise AuthorizationResponseError(
            f"the redirect {detail(shown)!r} is not to the redirect_uri {detail(redirect_uri)!r}"
        )
    query = parse_qs(parts.query, keep_blank_values=True)
    got_state = _single(query, "state")
    if got_state is None:
        raise StateMismatchError("the redirect has no state")
    # surrogatepass: a redirect string may hold a lone surrogate (never equal to the state)
    got = got_state.encode("utf-8", "surrogatepass")
    if not secrets.compare_digest(got, state.encode("utf-8", "surrogatepass")):
        raise StateMismatchError("the redirect's state is not the one sent")
    iss = _single(query, "iss")
    if iss is None:
        if iss_supported:
            raise IssuerResponseMismatchError(
                "the redirect has no iss, but the server's metadata sets "
                "authorization_response_iss_parameter_supported (RFC 9207 section 2.4)"
            )
    elif iss != issuer:
        raise IssuerResponseMismatchError(
            f"the redirect's iss {detail(iss)!r} is not the issuer {detail(issuer)!r} "
            "the request was sent to (RFC 9207 section 2.4)"
        )
    error = _single(query, "error")
    if error is not None:
        raise AuthorizationDeniedError(error, _single(query, "error_description"))
    code = _single(query, "code")
    if not code:
        raise AuthorizationResponseError("the redirect has neither code nor error")
    return AuthorizationCode(code, iss)


def _json(body: bytes) -> object:
    try:
        return orjson.loads(body)
    except orjson.JSONDecodeError:
        return None


def parse_token_response(
    status: int,
    body: bytes,
    *,
    now: float | None = None,
    token_types: Collection[str] = ("bearer",),
) -> Tokens:
    """The tokens of a token endpoint's answer (RFC 6749 section 5.1), or the error it
    gives (section 5.2: :class:`~mcp_sansio.auth.TokenErrorResponse`).

    A success is a 200 with a JSON object holding ``access_token`` and ``token_type``
    (REQUIRED), ``token_type`` one of ``token_types`` ("The value is case insensitive",
    section 5.1; by default ``Bearer`` alone; ``DPoP`` is RFC 9449 section 5's bound token)
    5.1); ``expires_in`` a non-negative integer if present. ``now`` is recorded as
    :attr:`Tokens.obtained_at`. No message ever quotes the body.
    """
    doc = _json(body)
    if status != 200:
        if isinstance(doc, dict) and isinstance(doc.get("error"), str):
            description = doc.get("error_description")
            raise TokenErrorResponse(
                status, doc["error"], description if isinstance(description, str) else None
            )
        raise TokenResponseError(f"the token endpoint answered {status} without an error object")
    if not isinstance(doc, dict):
        raise TokenResponseError("the token response is not a JSON object")
    access = doc.get("access_token")
    if not isinstance(access, str) or not access:
        raise TokenResponseError("the token response has no access_token string")
    token_type = doc.get("token_type")
    if not isinstance(token_type, str):
        raise TokenResponseError("the token response has no token_type string")
    if token_type.lower() not in {t.lower() for t in token_types}:
        raise TokenResponseError(
            f"the token_type is {detail(token_type)!r}, not one this client takes "
            f"({', '.join(token_types)})"
        )
    expires = doc.get("expires_in")
    if expires is not None and (type(expires) is not int or expires < 0):
        raise TokenResponseError("expires_in is not a non-negative integer")
    refresh = doc.get("refresh_token")
    if refresh is not None and not isinstance(refresh, str):
        raise TokenResponseError("refresh_token is not a string")
    scope = doc.get("scope")
    if scope is not None and not isinstance(scope, str):
        raise TokenResponseError("scope is not a string")
    kind = "Bearer" if token_type.lower() == "bearer" else token_type
    return Tokens(access, kind, expires, refresh, scope, now)
