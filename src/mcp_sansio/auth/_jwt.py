"""JWT access tokens (RFC 9068), verified sans-IO with joserfc (the ``auth`` extra).

joserfc is imported when a :class:`JwtVerifier` is made, so that ``mcp_sansio.auth``
imports without it. It checks the signature only; every claim is checked here, each
against its sentence (see :meth:`JwtVerifier.verify`). With ``jwks_url`` the keys are
fetched by the runtime: the verification asks for a ``GET`` of the JWKS (a step, as
:class:`~mcp_sansio.auth._resource.Verification` says), kept ``jwks_ttl`` seconds on the
caller's clock, fetched again at most every ``jwks_min_refresh`` seconds for a key id it
does not know (a key rotation).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

import orjson

from ._errors import AuthUsageError, detail
from ._oauth import HttpRequest
from ._resource import (
    Decided,
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

__all__ = ["DEFAULT_ALGORITHMS", "JwtVerifier"]

#: The asymmetric algorithms taken by default (never ``none``, nor the HMAC ones: a key
#: the server verifies with must not be one it could sign with).
DEFAULT_ALGORITHMS: Final = ("RS256", "PS256", "ES256", "EdDSA")
#: RFC 9068 section 4: "The resource server **MUST** verify that the ``typ`` header value
#: is ``at+jwt`` or ``application/at+jwt`` and reject tokens carrying any other type value."
AT_JWT_TYPES: Final = ("at+jwt", "application/at+jwt")
#: The largest JWKS document read, in bytes.
MAX_JWKS: Final = 1 << 20


class JwtVerifier:
    """Verifies JWT access tokens (RFC 9068) against an issuer's keys.

    :param issuer: the authorization server's issuer identifier: ``iss`` must equal it
        (RFC 9068 section 4: "The issuer identifier for the authorization server ...
        **MUST** exactly match the value of the ``iss`` claim").
    :param jwks: the issuer's JSON Web Key Set, as a dict (``{"keys": [...]}``); or
    :param jwks_url: where to fetch it (``jwks_uri`` of the issuer's metadata); the
        runtime makes the ``GET`` (see the module).
    :param audience: the ``aud`` value required; default: the resource the server passes
        (its ``ProtectedResource.resource``).
    :param algorithms: the ``alg`` values taken (default ``RS256``, ``PS256``, ``ES256``
        and ``EdDSA``: no HMAC one, whose key the server could sign with); ``none`` is
        refused (RFC 9068 section 4: the resource server "**MUST** ... reject
        ... ``none``"; RFC 8725 section 3.1).
    :param leeway: seconds of clock skew allowed on ``exp``, ``nbf`` and ``iat`` (RFC 7519
        section 4.1.4: "Implementers **MAY** provide for some small leeway, usually no
        more than a few minutes, to account for clock skew").
    :param token_types: the ``typ`` header values taken (default ``at+jwt`` and
        ``application/at+jwt``); ``None`` skips the check (for authorization servers
        that sign access tokens as plain JWTs; RFC 9068 asks for it).
    :param jwks_ttl: how long fetched keys are used, in seconds.
    :param jwks_min_refresh: the least time between two fetches, in seconds.
    :param cache: the verdicts reused until the token's ``exp`` (default: a
        :class:`~mcp_sansio.auth._resource.VerdictCache` of 1024 entries, 1 MiB).
    """

    def __init__(
        self,
        *,
        issuer: str,
        jwks: Mapping[str, Any] | None = None,
        jwks_url: str | None = None,
        audience: str | None = None,
        algorithms: Sequence[str] = DEFAULT_ALGORITHMS,
        leeway: float = 60.0,
        token_types: Sequence[str] | None = AT_JWT_TYPES,
        jwks_ttl: float = 3600.0,
        jwks_min_refresh: float = 60.0,
        cache: VerdictCache | None = None,
    ) -> None:
        from joserfc.jwk import KeySet  # the auth extra; imported here only

        if (jwks is None) == (jwks_url is None):
            raise AuthUsageError("give jwks or jwks_url, one of them")
        algs = tuple(algorithms)
        if not algs or any(a.lower() == "none" for a in algs):
            raise AuthUsageError("algorithms must list signing algorithms, never 'none'")
        self.issuer = issuer
        """The issuer ``iss`` must equal."""
        # keys fetched over plain http off loopback could be anyone's (MCP: every
        # authorization server endpoint "MUST be served over HTTPS")
        self.jwks_url = None if jwks_url is None else check_endpoint(jwks_url, "jwks_url", "usage")
        """Where the keys are fetched, or ``None``."""
        self.audience = audience
        """The ``aud`` required, or ``None`` for the server's resource."""
        self.algorithms = algs
        """The ``alg`` values taken."""
        self.leeway = float(leeway)
        """Seconds of clock skew allowed."""
        self.token_types = None if token_types is None else tuple(t.lower() for t in token_types)
        """The ``typ`` values taken, or ``None``."""
        self.jwks_ttl = jwks_ttl
        self.jwks_min_refresh = jwks_min_refresh
        self.cache = VerdictCache() if cache is None else cache
        """The verdicts kept."""
        self._keyset_class = KeySet
        self._keys: Any = None
        self._kids: frozenset[str] = frozenset()
        self._fetched_at: float | None = None
        if jwks is not None:
            self._load(jwks)

    # ------------------------------------------------------------------ keys

    def _load(self, jwks: Mapping[str, Any]) -> None:
        keys = jwks.get("keys")
        if not isinstance(keys, list):
            raise AuthUsageError("a JWKS is an object with a 'keys' list (RFC 7517 section 5)")
        usable = [
            k
            for k in keys
            if isinstance(k, dict) and k.get("use", "sig") == "sig" and k.get("kty") != "oct"
        ]
        try:
            self._keys = self._keyset_class.import_key_set({"keys": usable})
        except Exception as exc:  # joserfc's errors for a key it cannot read
            raise AuthUsageError(f"the JWKS has a key that cannot be read: {detail(exc)}") from None
        self._kids = frozenset(k["kid"] for k in usable if isinstance(k.get("kid"), str))

    def _needs_fetch(self, kid: object, now: float) -> bool:
        if self.jwks_url is None:
            return False
        if self._fetched_at is None or now >= self._fetched_at + self.jwks_ttl:
            return True
        if self._keys is None:  # the last fetch failed: again, as often as a new key id
            return now >= self._fetched_at + self.jwks_min_refresh
        unknown = isinstance(kid, str) and kid not in self._kids
        return unknown and now >= self._fetched_at + self.jwks_min_refresh

    def jwks_request(self) -> HttpRequest:
        """The ``GET`` of the JWKS."""
        assert self.jwks_url is not None
        return HttpRequest("GET", self.jwks_url, (("Accept", "application/json"),))

    def receive_jwks(self, status: int, body: bytes, *, now: float) -> str | None:
        """Take the answer to :meth:`jwks_request`; returns why it is unusable, or ``None``
        (the keys are in use from ``now``). A failed fetch keeps the keys held before."""
        self._fetched_at = now
        if status != 200:
            return f"the JWKS fetch answered {status}"
        if len(body) > MAX_JWKS:
            return f"the JWKS is larger than {MAX_JWKS} bytes"
        try:
            doc = orjson.loads(body)
        except orjson.JSONDecodeError:
            return "the JWKS is not JSON"
        if not isinstance(doc, dict):
            return "the JWKS is not a JSON object"
        try:
            self._load(doc)
        except AuthUsageError as exc:
            return str(exc)
        return None

    # ------------------------------------------------------------------ tokens

    def verify(self, token: str, *, resource: str, now: float) -> Verification:
        """Start verifying ``token`` (see :class:`TokenVerifier
        <mcp_sansio.auth._resource.TokenVerifier>`). Decided at once unless the keys must
        be fetched first."""
        cached = self.cache.get(f"{self.audience or resource}\0{token}", now)
        if cached is not None:
            return Decided(cached)
        header = _header(token)
        if isinstance(header, InvalidToken):
            return Decided(header)
        if self._needs_fetch(header.get("kid"), now):
            return _Fetching(self, token, resource)
        return Decided(self._decide(token, header, resource, now))

    def _unavailable(self, reason: str) -> Unavailable:
        """No keys to check with (503): a retry may succeed once the JWKS is fetched again,
        at most every ``jwks_min_refresh`` seconds."""
        return Unavailable(reason, retry_after=max(1, math.ceil(self.jwks_min_refresh)))

    def _decide(self, token: str, header: Mapping[str, Any], resource: str, now: float) -> Verdict:
        verdict = self._check(token, header, resource, now)
        self.cache.put(f"{self.audience or resource}\0{token}", verdict, now)  # per audience
        return verdict

    def _check(self, token: str, header: Mapping[str, Any], resource: str, now: float) -> Verdict:
        """The checks of RFC 9068 section 4, in its order (every failure: 401
        ``invalid_token``, "The resource server **MUST** handle errors as described in
        Section 3.1 of [RFC6750]")."""
        from joserfc import jwt
        from joserfc.errors import JoseError

        alg = header.get("alg")
        if not isinstance(alg, str) or alg not in self.algorithms:
            return InvalidToken(f"the token's alg {detail(alg)!r} is not one this server takes")
        typ = header.get("typ")
        if self.token_types is not None and (
            not isinstance(typ, str) or typ.lower() not in self.token_types
        ):
            return InvalidToken(
                f"the token's typ is {detail(typ)!r}, not at+jwt (RFC 9068 section 4: the "
                "resource server MUST reject tokens carrying any other type value)"
            )
        if self._keys is None:
            return self._unavailable("the issuer's keys could not be fetched")
        try:
            claims = jwt.decode(token, self._keys, algorithms=list(self.algorithms)).claims
        except (JoseError, ValueError, TypeError):
            return InvalidToken("the token's signature does not verify with the issuer's keys")
        return self._claims(claims, resource, now)

    def _claims(self, claims: Mapping[str, Any], resource: str, now: float) -> Verdict:
        if claims.get("iss") != self.issuer:
            return InvalidToken(
                f"the token's iss {detail(claims.get('iss'))!r} is not the issuer "
                f"{detail(self.issuer)!r} (RFC 9068 section 4: it MUST exactly match)"
            )
        audience = self.audience or resource
        if not audience_matches(claims.get("aud"), audience):
            return InvalidToken(
                f"the token is not for this resource: its aud is not {detail(audience)!r} "
                "(MCP: servers MUST validate that access tokens were issued specifically for "
                "them as the intended audience)"
            )
        exp = claims.get("exp")
        if not isinstance(exp, (int, float)) or isinstance(exp, bool):
            return InvalidToken("the token has no numeric exp (RFC 9068 section 2.2: REQUIRED)")
        if now >= exp + self.leeway:
            return InvalidToken(
                "the token has expired (RFC 7519 section 4.1.4: on or after exp it MUST NOT be "
                "accepted)"
            )
        nbf = claims.get("nbf")
        if nbf is not None and (not _number(nbf) or now + self.leeway < nbf):
            return InvalidToken(
                "the token is not valid yet (RFC 7519 section 4.1.5: before nbf it MUST NOT be "
                "accepted)"
            )
        iat = claims.get("iat")
        if iat is not None and (not _number(iat) or iat > now + self.leeway):
            return InvalidToken("the token's iat is in the future")
        scopes = scopes_of(claims)
        if scopes is None:
            return InvalidToken("the token's scope claim is neither a string nor a list of them")
        sub = claims.get("sub")
        client = claims.get("client_id", claims.get("azp"))
        aud: Any = claims.get("aud")
        return Principal(
            subject=sub if isinstance(sub, str) else None,
            client_id=client if isinstance(client, str) else None,
            scopes=scopes,
            audience=(aud,)
            if isinstance(aud, str)
            else tuple(a for a in aud if isinstance(a, str)),
            expires_at=float(exp),
            issuer=self.issuer,
            claims=dict(claims),
        )


def _number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _header(token: str) -> dict[str, Any] | InvalidToken:
    """The JOSE header of a compact JWS, without verifying anything."""
    import base64

    parts = token.split(".")
    if len(parts) != 3:
        return InvalidToken("the token is not a JWT (three base64url parts)")
    try:
        raw = base64.urlsafe_b64decode(parts[0] + "=" * (-len(parts[0]) % 4))
        header = orjson.loads(raw)
    except (ValueError, orjson.JSONDecodeError):
        return InvalidToken("the token's header is not base64url JSON")
    if not isinstance(header, dict):
        return InvalidToken("the token's header is not a JSON object")
    return header


class _Fetching:
    """A verification that fetches the JWKS first."""

    def __init__(self, verifier: JwtVerifier, token: str, resource: str) -> None:
        self._verifier = verifier
        self._token = token
        self._resource = resource
        self._verdict: Verdict | None = None

    def __repr__(self) -> str:
        return f"<JWT verification, {'decided' if self._verdict else 'fetching the JWKS'}>"

    def next_step(self) -> HttpRequest | Verdict:
        if self._verdict is not None:
            return self._verdict
        return self._verifier.jwks_request()

    def receive_response(
        self, status: int, headers: Iterable[tuple[str, str]], body: bytes, *, now: float
    ) -> None:
        v = self._verifier
        problem = v.receive_jwks(status, body, now=now)
        header = _header(self._token)
        if isinstance(header, InvalidToken):  # pragma: no cover - checked before
            self._verdict = header
        elif problem is not None and v._keys is None:
            self._verdict = v._unavailable(f"the issuer's keys could not be fetched: {problem}")
        else:
            self._verdict = v._decide(self._token, header, self._resource, now)
