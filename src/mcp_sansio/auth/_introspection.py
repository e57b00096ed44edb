"""Token introspection (RFC 7662), sans-IO: the request to the introspection endpoint and
the reading of its answer, as a :class:`~mcp_sansio.auth._resource.Verification` step
(the runtime makes the request, see :class:`~mcp_sansio.http._sessions.Fetch`).

RFC 7662 section 2.1: "The protected resource calls the introspection endpoint using an
HTTP ``POST`` request with parameters sent as ``application/x-www-form-urlencoded``
data": ``token`` (REQUIRED) and ``token_type_hint``; "the endpoint **MUST** also require
some form of authorization": the resource authenticates as an OAuth client (``Basic``,
RFC 6749 section 2.3.1) or with a bearer token of its own. Section 2.2: ``active`` is
REQUIRED; "If the introspection call is properly authorized but the token is not active
..., the authorization server **MUST** return ... ``{"active": false}``".
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any
from urllib.parse import quote, urlencode

import orjson

from ._errors import AuthUsageError, detail
from ._oauth import HttpRequest, _basic
from ._resource import (
    InvalidToken,
    Principal,
    Unavailable,
    Verdict,
    VerdictCache,
    Verification,
    audience_matches,
    scopes_of,
)
from ._urls import check_endpoint

__all__ = ["IntrospectionVerifier", "parse_introspection"]

#: The largest introspection answer read, in bytes.
MAX_ANSWER = 1 << 16


class IntrospectionVerifier:
    """Verifies tokens by asking the authorization server (RFC 7662).

    :param endpoint: the ``introspection_endpoint`` (https, or http on loopback).
    :param client_id: the resource's client id at the authorization server; with
    :param client_secret: its secret (``client_secret_basic``); or
    :param bearer: a token of the resource's own for the endpoint (section 2.1: "a
        separate OAuth 2.0 access token such as the bearer token").
    :param audience: the ``aud`` required (default: the resource the server passes). An
        answer without ``aud`` naming it is refused (MCP: servers "**MUST** reject tokens
        that do not include them in the audience claim").
    :param issuer: when given, an answer's ``iss`` must equal it.
    :param cache: the verdicts reused until the token's ``exp`` (default: at most 60
        seconds, 1024 entries, 1 MiB; section 4: caching trades against revocation).
    """

    def __init__(
        self,
        endpoint: str,
        *,
        client_id: str | None = None,
        client_secret: str | None = None,
        bearer: str | None = None,
        audience: str | None = None,
        issuer: str | None = None,
        cache: VerdictCache | None = None,
    ) -> None:
        check_endpoint(endpoint, "the introspection endpoint", "usage")
        if (client_secret is None or client_id is None) and bearer is None:
            raise AuthUsageError(
                "the introspection endpoint MUST require some form of authorization "
                "(RFC 7662 section 2.1): give client_id and client_secret, or bearer"
            )
        self.endpoint = endpoint
        """The introspection endpoint."""
        self.audience = audience
        self.issuer = issuer
        if bearer is not None:
            self._authorization = f"Bearer {bearer}"
        else:
            assert client_id is not None
            assert client_secret is not None
            self._authorization = _basic(client_id, client_secret)
        self.cache = VerdictCache() if cache is None else cache
        """The verdicts kept."""

    def __repr__(self) -> str:
        return f"IntrospectionVerifier({self.endpoint!r})"

    def request(self, token: str) -> HttpRequest:
        """The introspection request for ``token`` (its body holds the token: never log
        it; :class:`HttpRequest`'s repr shows neither body nor credentials)."""
        body = urlencode(
            [("token", token), ("token_type_hint", "access_token")], quote_via=quote
        ).encode("ascii")
        headers = (
            ("Content-Type", "application/x-www-form-urlencoded"),
            ("Accept", "application/json"),
            ("Authorization", self._authorization),
        )
        return HttpRequest("POST", self.endpoint, headers, body)

    def verify(self, token: str, *, resource: str, now: float) -> Verification:
        """Start verifying ``token``: the cached verdict, or one introspection request."""
        cached = self.cache.get(f"{self.audience or resource}\0{token}", now)
        if cached is not None:
            from ._resource import Decided

            return Decided(cached)
        return _Introspecting(self, token, self.audience or resource)


def parse_introspection(
    status: int, body: bytes, *, audience: str, issuer: str | None, now: float
) -> Verdict:
    """The verdict of an introspection answer (RFC 7662 section 2.2). An answer that is
    not one (another status than 200, status 0 for a request that could not be made, a
    body that is not such a JSON object) says nothing of the token: :class:`Unavailable`
    (503), not a refusal."""
    if status != 200:
        return Unavailable(f"the introspection endpoint answered {status}")
    if len(body) > MAX_ANSWER:
        return Unavailable(f"the introspection answer is larger than {MAX_ANSWER} bytes")
    try:
        doc: Any = orjson.loads(body)
    except orjson.JSONDecodeError:
        return Unavailable("the introspection answer is not JSON")
    if not isinstance(doc, dict) or not isinstance(doc.get("active"), bool):
        return Unavailable("the introspection answer has no boolean active (REQUIRED)")
    if doc["active"] is not True:
        return InvalidToken("the token is not active")
    exp = doc.get("exp")
    if exp is not None and (not isinstance(exp, (int, float)) or isinstance(exp, bool)):
        return InvalidToken("the introspection answer's exp is not a number")
    if exp is not None and now >= exp:
        return InvalidToken("the token has expired")
    if issuer is not None and doc.get("iss") != issuer:
        return InvalidToken(f"the token's iss {detail(doc.get('iss'))!r} is not {detail(issuer)!r}")
    if not audience_matches(doc.get("aud"), audience):
        return InvalidToken(
            f"the token is not for this resource: its aud is not {detail(audience)!r} (MCP: "
            "servers MUST validate that access tokens were issued specifically for them)"
        )
    scopes = scopes_of(doc)
    if scopes is None:
        return InvalidToken("the introspection answer's scope is not a string")
    aud: Any = doc.get("aud")
    sub, client = doc.get("sub"), doc.get("client_id")
    return Principal(
        subject=sub if isinstance(sub, str) else None,
        client_id=client if isinstance(client, str) else None,
        scopes=scopes,
        audience=(aud,) if isinstance(aud, str) else tuple(a for a in aud if isinstance(a, str)),
        expires_at=None if exp is None else float(exp),
        issuer=doc.get("iss") if isinstance(doc.get("iss"), str) else None,
        claims=doc,
    )


class _Introspecting:
    def __init__(self, verifier: IntrospectionVerifier, token: str, audience: str) -> None:
        self._verifier = verifier
        self._token = token
        self._audience = audience
        self._verdict: Verdict | None = None

    def __repr__(self) -> str:
        return f"<introspection, {'decided' if self._verdict else 'asking'}>"

    def next_step(self) -> HttpRequest | Verdict:
        if self._verdict is not None:
            return self._verdict
        return self._verifier.request(self._token)

    def receive_response(
        self, status: int, headers: Iterable[tuple[str, str]], body: bytes, *, now: float
    ) -> None:
        v = self._verifier
        self._verdict = parse_introspection(
            status, body, audience=self._audience, issuer=v.issuer, now=now
        )
        # the cache keeps no Unavailable: a failed call is no verdict on the token
        v.cache.put(f"{self._audience}\0{self._token}", self._verdict, now)  # per audience
