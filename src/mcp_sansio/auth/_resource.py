"""The resource-server side of authorization, sans-IO: what an MCP server that requires
tokens says and checks (standard library only).

- :class:`ProtectedResource`: the settings (the resource identifier, its authorization
  servers, the scopes), its protected resource metadata document (RFC 9728 section 2) and
  the well-known paths it is served at (section 3.1, path insertion, and the root);
- the answers: 401 with ``WWW-Authenticate: Bearer resource_metadata="…", scope="…"``
  (and ``error="invalid_token"`` when a token was given but is bad), 403 with
  ``error="insufficient_scope"``, 400 with ``error="invalid_request"`` (RFC 6750 section 3
  and 3.1; RFC 9728 section 5.1);
- :class:`Principal`, what a verified token says (who, for which client, with which
  scopes, until when), and :class:`TokenVerifier`, how a token becomes one: a
  :class:`Verification` step object that either decides at once or asks for one HTTP
  request at a time (an introspection, a JWKS fetch), like the client's
  :class:`~mcp_sansio.auth.Flow`; the runtime makes the request and hands the answer back;
- :class:`VerdictCache`, verdicts reused until the token's expiry on the caller's ``now``,
  bounded in entries and bytes, keyed by a hash of the token (the token itself is never
  kept).

What each version's authorization text asks of a server, and where it is checked:

- 2025-03-26: "When authorization is required and not yet proven by the client, servers
  **MUST** respond with *HTTP 401 Unauthorized*"; "Resource servers **MUST** validate
  access tokens"; "Invalid or expired tokens **MUST** receive a HTTP 401 response"; the
  status table: 401 "Authorization required or token invalid", 403 "Invalid scopes or
  insufficient permissions", 400 "Malformed authorization request". (This version names
  no resource metadata: its clients look for authorization server metadata at the MCP
  server's origin; a resource server that is not its own authorization server cannot
  serve that, see ``docs/auth-server.rst``.)
- 2025-06-18: "MCP servers **MUST** implement OAuth 2.0 Protected Resource Metadata"; the
  document "**MUST** include the ``authorization_servers`` field containing at least one
  authorization server"; "MCP servers **MUST** use the HTTP header ``WWW-Authenticate``
  when returning a *401 Unauthorized* to indicate the location of the resource server
  metadata URL"; "MCP servers **MUST** validate that access tokens were issued
  specifically for them as the intended audience" (:func:`audience_matches`).
- 2025-11-25 and 2026-07-28: servers "**MUST** implement one of the following discovery
  mechanisms": the header, or the well-known URI "At the path of the server's MCP
  endpoint" or "At the root"; clients try them "in the order listed above", so both are
  served (:attr:`ProtectedResource.metadata_paths`); "MCP servers **SHOULD** include a
  ``scope`` parameter in the ``WWW-Authenticate`` header"; on insufficient scope "the
  server **SHOULD** respond with: ``HTTP 403 Forbidden`` ... ``error="insufficient_scope"``
  ... ``scope="required_scope1 required_scope2"`` ... ``resource_metadata``".
- Every version: "Access tokens **MUST NOT** be included in the URI query string"
  (:func:`query_token`), and "MCP servers **MUST NOT** accept or transit any other tokens":
  a token is read from the ``Authorization`` header only and goes nowhere else; no message
  of this module or its verifiers ever quotes one.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, Protocol
from urllib.parse import parse_qsl, urlsplit

import orjson

from ._errors import AuthUsageError, detail
from ._oauth import HttpRequest

if TYPE_CHECKING:
    from ._dpop_proof import DPoPProofs
from ._urls import PROTECTED_RESOURCE, check_endpoint, path_inserted, same_resource

__all__ = [
    "BEARER_METHODS",
    "Decided",
    "InvalidToken",
    "Principal",
    "ProtectedResource",
    "ServerAuth",
    "TokenVerifier",
    "Unavailable",
    "Verdict",
    "Verification",
    "VerdictCache",
    "audience_matches",
    "bearer_challenge_header",
    "bearer_token",
    "query_token",
    "scope_list",
    "scopes_of",
]

#: The only way this server takes a token (RFC 6750 section 2.1; RFC 9728 section 2,
#: ``bearer_methods_supported``): MCP clients "**MUST** use the Authorization request header
#: field", and the query is refused outright.
BEARER_METHODS: Final = ("header",)
#: RFC 6750 section 2.1: ``b64token = 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" /
#: "/" ) *"="``.
_B64TOKEN: Final = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~+/")
#: The longest token read, in characters: a bound on hostile input (the head itself is
#: bounded by the binding).
MAX_TOKEN: Final = 16384
#: RFC 6750 section 2.3: the query parameter a token would travel in.
_QUERY_PARAM: Final = "access_token"


def scope_list(scopes: Iterable[str]) -> str:
    """Scopes as RFC 6749 section 3.3 writes them: space-delimited, in the given order,
    each once."""
    return " ".join(dict.fromkeys(scopes))


@dataclass(frozen=True)
class ProtectedResource:
    """What an MCP server that requires tokens is, as a protected resource (RFC 9728).

    :param resource: the resource identifier: the canonical URI of the MCP endpoint
        (``https://mcp.example.com/mcp``; MCP 2025-06-18 and later, Canonical Server URI;
        RFC 9728 section 2: "The protected resource's resource identifier, which is a URL
        that uses the ``https`` scheme and has no fragment component"; ``http`` is taken
        for a loopback host, for tests and local servers). Tokens must be issued for it
        (their audience).
    :param authorization_servers: the issuer identifiers of the authorization servers
        whose tokens are taken (MCP: "**MUST** include the ``authorization_servers``
        field containing at least one").
    :param scopes_supported: the scopes published in the document (RFC 9728 section 2,
        RECOMMENDED), or ``None``.
    :param required_scopes: the scopes every MCP request needs: a token without one of
        them gets 403 ``insufficient_scope``; they are the ``scope`` of the 401 challenge
        too (default: none required, and the 401 names ``scopes_supported``, if any).
    :param resource_name: a human-readable name (section 2, RECOMMENDED).
    :param resource_documentation: a URL of documentation for developers (section 2).
    :param extra: more members of the document (``jwks_uri``, ``tls_client_…``, …).
    """

    resource: str
    authorization_servers: tuple[str, ...]
    scopes_supported: tuple[str, ...] | None = None
    required_scopes: tuple[str, ...] = ()
    resource_name: str | None = None
    resource_documentation: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        check_endpoint(self.resource, "the resource identifier", "usage")
        if urlsplit(self.resource).fragment:  # pragma: no cover - check_endpoint refuses
            raise AuthUsageError("the resource identifier has a fragment")
        servers = tuple(self.authorization_servers)
        if not servers or not all(isinstance(s, str) and s for s in servers):
            raise AuthUsageError(
                "authorization_servers must name at least one issuer (MCP: the document "
                "MUST include the authorization_servers field containing at least one "
                "authorization server)"
            )
        object.__setattr__(self, "authorization_servers", servers)
        if self.scopes_supported is not None:
            object.__setattr__(self, "scopes_supported", tuple(self.scopes_supported))
        object.__setattr__(self, "required_scopes", tuple(self.required_scopes))
        for scope in (*self.required_scopes, *(self.scopes_supported or ())):
            if not scope or any(c in ' "\\' or not 0x21 <= ord(c) <= 0x7E for c in scope):
                # RFC 6749 section 3.3: scope-token = 1*( %x21 / %x23-5B / %x5D-7E )
                raise AuthUsageError(f"not a scope token: {detail(scope)!r}")

    # ------------------------------------------------------------------ the document

    @property
    def metadata_url(self) -> str:
        """The URL of the document, by path insertion (RFC 9728 section 3.1): the one the
        401 challenge names (section 5.1, ``resource_metadata``)."""
        return path_inserted(self.resource, PROTECTED_RESOURCE)

    @property
    def metadata_paths(self) -> tuple[str, ...]:
        """The paths the document is served at: the path-inserted one, then the root one
        (MCP 2025-11-25 and later: clients try "the path of the server's MCP endpoint"
        then "the root", "in the order listed above"; 2025-06-18's diagram fetches the
        root). One path when the resource has no path."""
        inserted = urlsplit(self.metadata_url).path
        root = f"/.well-known/{PROTECTED_RESOURCE}"
        return (inserted,) if inserted == root else (inserted, root)

    def document(self) -> dict[str, Any]:
        """The protected resource metadata (RFC 9728 section 2): ``resource`` (REQUIRED;
        section 3.3: it "**MUST** be identical to the protected resource's resource
        identifier value into which the well-known URI path suffix was inserted"),
        ``authorization_servers``, ``bearer_methods_supported`` (``["header"]``), and
        ``scopes_supported``, ``resource_name``, ``resource_documentation`` when set."""
        doc: dict[str, Any] = dict(self.extra)
        doc["resource"] = self.resource
        doc["authorization_servers"] = list(self.authorization_servers)
        doc["bearer_methods_supported"] = list(BEARER_METHODS)
        if self.scopes_supported is not None:
            doc["scopes_supported"] = list(self.scopes_supported)
        if self.resource_name is not None:
            doc["resource_name"] = self.resource_name
        if self.resource_documentation is not None:
            doc["resource_documentation"] = self.resource_documentation
        return doc

    def document_bytes(self) -> bytes:
        """:meth:`document` as the JSON body of the 200 answer (RFC 9728 section 3.2:
        "using the ``application/json`` content type")."""
        return orjson.dumps(self.document())

    # ------------------------------------------------------------------ the answers

    @property
    def challenge_scope(self) -> tuple[str, ...]:
        """The scopes a 401 names: the required ones, else those supported (MCP
        2025-11-25 and later: "MCP servers **SHOULD** include a ``scope`` parameter in the
        ``WWW-Authenticate`` header")."""
        return self.required_scopes or (self.scopes_supported or ())

    def unauthorized(
        self,
        error: str | None = None,
        description: str | None = None,
        *,
        proofs: DPoPProofs | None = None,
        dpop: bool = False,
    ) -> tuple[int, tuple[tuple[str, str], ...]]:
        """The 401 (RFC 6750 section 3): no ``error`` when the request had no token
        ("If the request lacks any authentication information ..., the resource server
        **SHOULD NOT** include an error code or other error information"), else
        ``invalid_token`` ("The access token provided is expired, revoked, malformed, or
        invalid for other reasons. The resource **SHOULD** respond with the HTTP 401").
        Returns the status and the header. With ``proofs`` (DPoP is taken), the challenges
        of :meth:`challenges`; ``dpop``: the request used the DPoP scheme."""
        return 401, self.challenges(self.challenge_scope, error, description, proofs, dpop)

    def forbidden(
        self,
        needed: Sequence[str],
        description: str | None = None,
        *,
        proofs: DPoPProofs | None = None,
        dpop: bool = False,
    ) -> tuple[int, tuple[tuple[str, str], ...]]:
        """The 403 for a token without the scopes ``needed`` (RFC 6750 section 3.1,
        ``insufficient_scope``: "The resource server **SHOULD** respond with the HTTP 403
        (Forbidden) status code and **MAY** include the ``scope`` attribute with the scope
        necessary to access the protected resource"); ``proofs`` and ``dpop`` as for
        :meth:`unauthorized`."""
        return 403, self.challenges(needed, "insufficient_scope", description, proofs, dpop)

    def unavailable(self, verdict: Unavailable) -> tuple[int, tuple[tuple[str, str], ...]]:
        """The 503 for a token that could not be checked now (:class:`Unavailable`):
        ``Retry-After`` and no challenge, since the token was not found bad."""
        return 503, (("retry-after", str(max(0, int(verdict.retry_after)))),)

    def bad_request(
        self, description: str, *, proofs: DPoPProofs | None = None, dpop: bool = False
    ) -> tuple[int, tuple[tuple[str, str], ...]]:
        """The 400 for a malformed authorization (RFC 6750 section 3.1, ``invalid_request``:
        "The request is missing a required parameter, includes an unsupported parameter or
        parameter value, repeats the same parameter, uses more than one method for
        including an access token, or is otherwise malformed. The resource server
        **SHOULD** respond with the HTTP 400 (Bad Request) status code"); ``proofs`` and
        ``dpop`` as for :meth:`unauthorized`."""
        return 400, self.challenges((), "invalid_request", description, proofs, dpop)

    def challenges(
        self,
        scope: Sequence[str],
        error: str | None,
        description: str | None,
        proofs: DPoPProofs | None = None,
        dpop: bool = False,
    ) -> tuple[tuple[str, str], ...]:
        """The ``WWW-Authenticate`` fields of an answer: a ``Bearer`` challenge (unless
        ``proofs`` takes only DPoP) and, with ``proofs``, a ``DPoP`` one with ``algs`` (RFC
        9449 section 7.2: RFC 9110 "allows a protected resource to indicate support for
        multiple authentication schemes (i.e., ``Bearer`` and ``DPoP``)"). The error goes
        on the scheme the request used (``dpop``): "If the mechanism used to attempt
        authentication could be established unambiguously, then the corresponding challenge
        **SHOULD** be used to deliver error information"; none without credentials ("the
        challenges **SHOULD NOT** include an error code")."""
        schemes: list[tuple[str, Sequence[str], bool]] = []
        if proofs is None or not proofs.required:
            schemes.append(("Bearer", (), proofs is None or not dpop))
        if proofs is not None:
            schemes.append(("DPoP", proofs.algorithms, dpop or proofs.required))
        return tuple(
            (
                "www-authenticate",
                bearer_challenge_header(
                    self.metadata_url,
                    scope,
                    error if on else None,
                    description if on else None,
                    scheme=scheme,
                    algs=algs,
                ),
            )
            for scheme, algs, on in schemes
        )


def _quoted(value: str) -> str:
    """A quoted-string of RFC 9110 section 5.6.4 whose content RFC 6750 section 3 allows
    for ``scope``, ``error`` and ``error_description``: "%x20-21 / %x23-5B / %x5D-7E"
    (no ``"`` nor ``\\``): anything else becomes ``?``."""
    safe = "".join(c if 0x20 <= ord(c) <= 0x7E and c not in '"\\' else "?" for c in value)
    return f'"{safe}"'


def bearer_challenge_header(
    resource_metadata: str,
    scope: Sequence[str] = (),
    error: str | None = None,
    description: str | None = None,
    *,
    scheme: str = "Bearer",
    algs: Sequence[str] = (),
) -> str:
    """A ``Bearer`` challenge: ``resource_metadata`` (RFC 9728 section 5.1), ``scope``
    when there are scopes, ``error`` and ``error_description`` when given (RFC 6750
    section 3: each attribute "**MUST NOT** appear more than once"). With ``scheme``
    ``"DPoP"``, the same parameters in a ``DPoP`` challenge, with ``algs`` (RFC 9449
    section 7.1: "An ``algs`` parameter **SHOULD** be included ... a space-delimited list
    of JWS ``alg`` (Algorithm) header values")."""
    parts = [f"resource_metadata={_quoted(resource_metadata)}"]
    if scope:
        parts.append(f"scope={_quoted(scope_list(scope))}")
    if error is not None:
        parts.append(f"error={_quoted(error)}")
        if description:
            parts.append(f"error_description={_quoted(detail(description))}")
    if algs:
        parts.append(f"algs={_quoted(' '.join(algs))}")
    return f"{scheme} " + ", ".join(parts)


# ---------------------------------------------------------------------- reading the token


def query_token(target: str) -> bool:
    """Whether the request target carries ``access_token`` in its query (RFC 6750
    section 2.3's method, which MCP forbids: "Access tokens **MUST NOT** be included in
    the URI query string")."""
    query = urlsplit(target).query
    if not query:
        return False
    return any(name == _QUERY_PARAM for name, _ in parse_qsl(query, keep_blank_values=True))


def bearer_token(authorization: str | None, scheme: str = "Bearer") -> str | None:
    """The token of an ``Authorization: Bearer <token>`` header (RFC 6750 section 2.1),
    ``None`` when there is no header or it is of another scheme (an "unsupported
    authentication method": a 401 without an error). Raises :class:`ValueError`, with a
    message that never quotes the header, when it is a Bearer one that is malformed (more
    than one value, not a b64token, too long). With ``scheme`` ``"DPoP"``, the token of an
    ``Authorization: DPoP <token>`` header (RFC 9449 section 7.1: a ``token68``, the same
    characters)."""
    if authorization is None:
        return None
    value = authorization.strip()
    given, _, rest = value.partition(" ")
    if given.lower() != scheme.lower():
        if "," in value and scheme.lower() in value.lower():
            # a second Authorization field folded into one (RFC 9110 section 5.3)
            raise ValueError("more than one Authorization header")
        return None
    token = rest.strip(" ")
    if not token:
        raise ValueError(f"the {scheme} credentials are empty")
    if len(token) > MAX_TOKEN:
        raise ValueError(f"the token is longer than {MAX_TOKEN} characters")
    body = token.rstrip("=")
    if not body or not set(body) <= _B64TOKEN:
        # also a second header folded in with a comma (RFC 9110 section 5.3)
        raise ValueError(f"the {scheme} credentials are not a b64token (RFC 6750 section 2.1)")
    return token


# ---------------------------------------------------------------------- principals


@dataclass(frozen=True)
class Principal:
    """Who a verified token speaks for: what the server's handlers see
    (:attr:`~mcp_sansio.session.ContextBase.principal`). It never holds the token."""

    subject: str | None
    """The ``sub`` claim (RFC 9068 section 2.2; RFC 7662 section 2.2), or ``None``."""
    client_id: str | None = None
    """The OAuth client the token was issued to (``client_id``)."""
    scopes: frozenset[str] = frozenset()
    """The scopes granted."""
    audience: tuple[str, ...] = ()
    """The ``aud`` values (this resource among them)."""
    expires_at: float | None = None
    """``exp``, seconds since the epoch, if the token has one."""
    issuer: str | None = None
    """``iss``."""
    claims: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)
    """All the claims (a JWT's payload, or the introspection answer)."""

    @property
    def key(self) -> str:
        """The identity sessions and ``requestState`` are bound to: issuer, subject and
        client (the security best practices: "MCP servers **SHOULD** bind session IDs to
        user-specific information ... a key format like ``<user_id>:<session_id>``")."""
        return orjson.dumps([self.issuer, self.subject, self.client_id]).decode()


@dataclass(frozen=True)
class InvalidToken:
    """A refused token: 401 ``invalid_token``. ``reason`` never quotes the token."""

    reason: str
    """Why (for the ``error_description``, and the server's log)."""


@dataclass(frozen=True)
class Unavailable:
    """A token that could not be checked now: the verifier's authorization server did not
    answer usably (its keys could not be fetched, its introspection endpoint failed). The
    server answers 503 Service Unavailable with ``Retry-After`` (RFC 9110 sections 15.6.4
    and 10.2.3), not 401 ``invalid_token``, which says the token is "expired, revoked,
    malformed, or invalid" (RFC 6750 section 3.1) and would send the client to authorize
    again for nothing. Never cached. ``reason`` never quotes the token."""

    reason: str
    """Why (for the server's log; the answer's body)."""
    retry_after: int = 30
    """Seconds after which a retry may succeed (the ``Retry-After`` value)."""


#: What a verification ends with.
Verdict = Principal | InvalidToken | Unavailable


class Verification(Protocol):
    """One token being verified, as a step object: :meth:`next_step` says what comes next,
    an HTTP request for the runtime to make (the answer goes to :meth:`receive_response`)
    or the verdict."""

    def next_step(self) -> HttpRequest | Verdict:
        """The request to make, or the verdict."""
        ...

    def receive_response(
        self,
        status: int,
        headers: Iterable[tuple[str, str]],
        body: bytes,
        *,
        now: float,
    ) -> None:
        """The answer to the request :meth:`next_step` returned (``status`` 0 and no
        body: it could not be made)."""
        ...


class TokenVerifier(Protocol):
    """Turns a token into a :class:`Verification` (:class:`~mcp_sansio.auth.JwtVerifier`,
    :class:`~mcp_sansio.auth.IntrospectionVerifier`, or your own).

    A verifier must check that the token was issued for ``resource`` (MCP 2025-06-18 and
    later: "MCP servers **MUST** validate that access tokens were issued specifically for
    them as the intended audience"): :func:`audience_matches`."""

    def verify(self, token: str, *, resource: str, now: float) -> Verification:
        """Start verifying ``token`` for the resource ``resource`` at time ``now`` (seconds
        since the epoch, the caller's clock)."""
        ...


@dataclass
class Decided:
    """A :class:`Verification` decided without I/O."""

    verdict: Verdict

    def next_step(self) -> HttpRequest | Verdict:
        """The verdict."""
        return self.verdict

    def receive_response(
        self, status: int, headers: Iterable[tuple[str, str]], body: bytes, *, now: float
    ) -> None:
        """Never called (there is no request)."""
        raise AuthUsageError("this verification made no request")


def audience_matches(audience: object, resource: str) -> bool:
    """Whether ``audience`` (a string or a list of strings: RFC 7519 section 4.1.3, RFC
    7662 section 2.2) names ``resource``, compared as resource identifiers are (scheme and
    host case-insensitive, a lone ``/`` path equal to none; MCP: "implementations
    **SHOULD** accept uppercase scheme and host components"). RFC 9068 section 4: the
    resource server "**MUST** validate that the ``aud`` claim contains a resource
    indicator value corresponding to an identifier the resource server expects for
    itself"; RFC 7519 section 4.1.3: "If the principal processing the claim does not
    identify itself with a value in the ``aud`` claim when this claim is present, then
    the JWT **MUST** be rejected"; MCP requires it present ("**MUST** reject tokens that do
    not include them in the audience claim")."""
    values: Collection[object]
    if isinstance(audience, str):
        values = (audience,)
    elif isinstance(audience, list):
        values = audience
    else:
        return False
    return any(isinstance(v, str) and same_resource(v, resource) for v in values)


def scopes_of(claims: Mapping[str, Any]) -> frozenset[str] | None:
    """The scopes of a token's claims: ``scope``, a space-delimited string (RFC 9068
    section 2.2.3, RFC 7662 section 2.2, RFC 8693 section 4.2), or ``scp``, a list of
    strings (used by some authorization servers); ``None`` when malformed."""
    scope = claims.get("scope")
    if isinstance(scope, str):
        return frozenset(s for s in scope.split(" ") if s)
    if scope is not None:
        return None
    scp = claims.get("scp")
    if isinstance(scp, list) and all(isinstance(s, str) for s in scp):
        return frozenset(scp)
    if isinstance(scp, str):
        return frozenset(s for s in scp.split(" ") if s)
    if scp is not None:
        return None
    return frozenset()


# ---------------------------------------------------------------------- caching


class VerdictCache:
    """Verdicts by token, reused until they expire on the caller's clock: bounded in
    entries and in bytes (the oldest go first), keyed by the SHA-256 of the token (the
    token is never kept). A :class:`Principal` is kept until the earlier of its
    ``expires_at`` and ``now + ttl``; a refusal for ``negative_ttl`` seconds.

    :param max_entries: the most verdicts kept.
    :param max_bytes: the most bytes of claims kept (each verdict counts its claims' JSON
        size and 256 more).
    :param ttl: the longest a principal is reused, in seconds (an introspection answer
        could be revoked meanwhile: RFC 7662 section 4, "the protected resource needs to
        consider the trade-off between caching and the potential for a revoked token to
        be used").
    :param negative_ttl: how long a refusal is reused.
    """

    _COST: Final = 256

    def __init__(
        self,
        *,
        max_entries: int = 1024,
        max_bytes: int = 1 << 20,
        ttl: float = 60.0,
        negative_ttl: float = 5.0,
    ) -> None:
        self.max_entries = max_entries
        """The most verdicts kept."""
        self.max_bytes = max_bytes
        """The most bytes kept."""
        self.ttl = ttl
        """The longest a principal is reused, in seconds."""
        self.negative_ttl = negative_ttl
        """How long a refusal is reused, in seconds."""
        self._items: OrderedDict[bytes, tuple[float, Verdict, int]] = OrderedDict()
        self.bytes = 0
        """What the verdicts kept count now."""

    @staticmethod
    def _key(token: str) -> bytes:
        return hashlib.sha256(token.encode("utf-8", "replace")).digest()

    def __len__(self) -> int:
        return len(self._items)

    def get(self, token: str, now: float) -> Verdict | None:
        """The verdict kept for ``token``, if it is still good at ``now``."""
        key = self._key(token)
        item = self._items.get(key)
        if item is None:
            return None
        until, verdict, size = item
        if now >= until:
            del self._items[key]
            self.bytes -= size
            return None
        return verdict

    def put(self, token: str, verdict: Verdict, now: float) -> None:
        """Keep ``verdict`` for ``token`` (an :class:`Unavailable` is not kept: it is no
        verdict on the token)."""
        if isinstance(verdict, Unavailable):
            return
        if isinstance(verdict, Principal):
            until = now + self.ttl
            if verdict.expires_at is not None:
                until = min(until, verdict.expires_at)
            try:
                size = len(orjson.dumps(dict(verdict.claims))) + self._COST
            except TypeError:
                return
        else:
            until = now + self.negative_ttl
            size = len(verdict.reason) + self._COST
        if until <= now or size > self.max_bytes or self.max_entries < 1:
            return
        key = self._key(token)
        old = self._items.pop(key, None)
        if old is not None:
            self.bytes -= old[2]
        self._items[key] = (until, verdict, size)
        self.bytes += size
        while len(self._items) > self.max_entries or self.bytes > self.max_bytes:
            _, (_, _, gone) = self._items.popitem(last=False)
            self.bytes -= gone


@dataclass(frozen=True)
class ServerAuth:
    """What an HTTP server that requires tokens takes as ``auth=``: the resource it is, the
    verifier of its tokens, and, to take DPoP-bound tokens (RFC 9449), the checks of their
    proofs (see ``docs/auth-server.rst``)."""

    resource: ProtectedResource
    """The settings and the metadata document."""
    verifier: TokenVerifier
    """How a token becomes a :class:`Principal`."""
    dpop: DPoPProofs | None = None
    """With :class:`~mcp_sansio.auth.DPoPProofs`, ``Authorization: DPoP`` is taken too (or
    only, with ``required``), and a DPoP-bound token sent as a Bearer one is refused."""

    def document_bytes(self) -> bytes:
        """The protected resource metadata as served: the resource's, with the DPoP members
        (RFC 9728 section 2) when DPoP is taken."""
        if self.dpop is None:
            return self.resource.document_bytes()
        return orjson.dumps({**self.resource.document(), **self.dpop.metadata()})
