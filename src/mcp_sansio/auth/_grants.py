"""The authorization extensions' grants, sans-IO: client credentials, the JWT bearer grant
(workload identity federation) and enterprise-managed authorization (token exchange for an
ID-JAG, then the JWT bearer grant).

Each grant is a :class:`~mcp_sansio.auth.Flow` (:class:`GrantFlow`) that needs no person:
it finds the authorization server as the code flow does (protected resource metadata, RFC
9728, then the server's metadata, RFC 8414 / OpenID Connect Discovery), then makes its token
request(s). :class:`GrantAuth` is the :class:`~mcp_sansio.auth.ClientAuth` that runs one on
a 401, so an HTTP client runs the extensions exactly as it runs the code flow.

The texts:

- OAuth Client Credentials (``io.modelcontextprotocol/oauth-client-credentials``,
  github.com/modelcontextprotocol/ext-auth, ``specification/draft/oauth-client-credentials.mdx``):
  "Clients **MUST** authenticate using one of these methods: JWT Authentication
  (RECOMMENDED) ... as defined in RFC 7523 Section 2.2 ... Client Secret"; the flow is the
  401, the resource metadata, the server metadata, then ``grant_type=client_credentials``
  (OAuth 2.1 section 4.2) with the client's authentication. The JWT example omits
  ``client_id`` from the body: "client identification is conveyed through the ``sub`` claim".
- Enterprise-Managed Authorization (``io.modelcontextprotocol/enterprise-managed-authorization``,
  the same repository, ``enterprise-managed-authorization.mdx``), section 4: "the MCP Client
  **MUST** make a Token Exchange (RFC8693) request to the IdP's Token Endpoint" with
  ``requested_token_type=urn:ietf:params:oauth:token-type:id-jag``, ``audience`` "The Issuer
  URL of the MCP server's authorization server", ``resource`` "The RFC9728 Resource
  Identifier of the MCP server", ``subject_token`` and ``subject_token_type`` (all
  REQUIRED), ``scope`` (OPTIONAL); section 4.2: the answer's ``issued_token_type`` is
  ``urn:ietf:params:oauth:token-type:id-jag``; section 5: then ``grant_type`` "**MUST** be
  ``urn:ietf:params:oauth:grant-type:jwt-bearer``" with the ID-JAG as ``assertion``, and
  "The MCP Client authenticates with its credentials as registered with the MCP Server's
  authorization server".
- Workload identity federation (SEP-1933, modelcontextprotocol/modelcontextprotocol pull
  request 1933, Draft), Flow Steps 1: "a POST request to the authorization server's token
  endpoint using the JWT Bearer grant type as specified in RFC 7523 Section 2.1", with
  ``grant_type`` ``urn:ietf:params:oauth:grant-type:jwt-bearer``, ``assertion`` "The
  client's workload JWT credential" and ``resource``; Security Implications: "Workload
  JWTs **MUST** be transmitted only over authenticated, TLS protected channels (https)"
  (the token endpoint is checked as every endpoint is: ``https``, or a loopback host). An
  error answer ends the flow and :class:`GrantAuth` starts no other with the same
  assertion (the suite's ``auth/wif-jwt-bearer`` checks that errors are surfaced
  "without retrying or switching grant types"; the SEP says nothing of retries).

Signing (the ``private_key_jwt`` assertion, RFC 7523 sections 2.2 and 3) uses joserfc
(the ``auth`` extra), imported only then. A JWT's ``iat``/``exp`` come from the ``now``
the caller gives, which must then be a wall clock (seconds since the epoch).
"""

from __future__ import annotations

import secrets
from collections.abc import Collection, Generator, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Protocol
from urllib.parse import quote, urlencode

import orjson

from ._challenge import BearerChallenge, bearer_challenge
from ._discovery import Discovered, Discovery
from ._dpop import signing_key
from ._errors import (
    AuthError,
    AuthUsageError,
    ChallengeError,
    ServerMetadataError,
    TokenErrorResponse,
    TokenResponseError,
    detail,
)
from ._flow import Authorized, Step
from ._metadata import PROFILES, ServerMetadata
from ._oauth import HttpRequest, parse_token_response, token_request
from ._oauth_client import _origin
from ._store import AuthMethod, ClientInfo, TokenKey, Tokens
from ._urls import canonical_resource, check_endpoint

__all__ = [
    "ASSERTION_TYPE_JWT",
    "GRANT_CLIENT_CREDENTIALS",
    "GRANT_JWT_BEARER",
    "GRANT_TOKEN_EXCHANGE",
    "TOKEN_TYPE_ID_JAG",
    "TOKEN_TYPE_ID_TOKEN",
    "ClientCredentials",
    "EnterpriseManaged",
    "Grant",
    "GrantAuth",
    "GrantFlow",
    "JwtBearer",
    "HttpResponse",
    "client_assertion",
]

GRANT_CLIENT_CREDENTIALS: Final = "client_credentials"
#: RFC 7523 section 2.1.
GRANT_JWT_BEARER: Final = "urn:ietf:params:oauth:grant-type:jwt-bearer"
#: RFC 8693 section 2.1.
GRANT_TOKEN_EXCHANGE: Final = "urn:ietf:params:oauth:grant-type:token-exchange"
#: RFC 7523 section 2.2.
ASSERTION_TYPE_JWT: Final = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
#: RFC 8693 section 3.
TOKEN_TYPE_ID_TOKEN: Final = "urn:ietf:params:oauth:token-type:id_token"
#: Enterprise-Managed Authorization, section 4.
TOKEN_TYPE_ID_JAG: Final = "urn:ietf:params:oauth:token-type:id-jag"
#: The lifetime of a client assertion made here, in seconds (RFC 7523 section 3: the JWT
#: "**MUST** contain an ``exp`` claim").
ASSERTION_LIFETIME: Final = 60
_FORM: Final = "application/x-www-form-urlencoded"


@dataclass(frozen=True)
class HttpResponse:
    """An HTTP answer handed back into a grant's steps."""

    status: int
    """The status."""
    headers: tuple[tuple[str, str], ...]
    """The header fields."""
    body: bytes = field(repr=False)
    """The body."""
    now: float | None
    """The caller's clock at the answer."""


#: A grant's steps: requests out, answers in, the tokens at the end.
Steps = Generator[HttpRequest, HttpResponse, Tokens]


class Grant(Protocol):
    """One grant: its token request(s), once the authorization server is known."""

    def steps(self, found: Discovered, *, now: float | None, token_types: Collection[str]) -> Steps:
        """The requests to make (``now`` is the caller's clock at the start; a token
        answer's ``token_type`` must be one of ``token_types``)."""
        ...


# -------------------------------------------------------------------------- the flow


def _challenge(values: str | Iterable[str] | None) -> BearerChallenge | None:
    """The ``Bearer`` (or ``DPoP``: RFC 9449 section 7.1 gives it the same parameters)
    challenge among ``values``; None when there is none or the fields do not parse (a
    grant needs none: discovery then starts at the well-known URIs)."""
    try:
        return bearer_challenge(values or (), ("bearer", "dpop"))
    except ChallengeError:
        return None


class GrantFlow:
    """A :class:`~mcp_sansio.auth.Flow` that runs discovery, then ``grant``'s steps, to
    :class:`~mcp_sansio.auth.Authorized` (keyed by the authorization server's issuer and
    the resource). It never asks for a person: :meth:`receive_redirect` is a usage error.
    A failure raises the step's :class:`~mcp_sansio.auth.AuthError` (an error answer of
    a token endpoint: ``TokenErrorResponse``) and ends the flow."""

    def __init__(
        self,
        server_url: str,
        grant: Grant,
        *,
        version: str,
        www_authenticate: str | Iterable[str] | None = None,
        authorization_server: str | None = None,
        now: float | None = None,
        token_types: Collection[str] = ("bearer",),
    ) -> None:
        profile = PROFILES.get(version)
        if profile is None:
            raise AuthUsageError(
                f"no authorization text for version {detail(version)!r} (one of {sorted(PROFILES)})"
            )
        check_endpoint(server_url, "the MCP server URL", "usage")
        self.server_url = canonical_resource(server_url)
        """The MCP server's canonical URI."""
        self.found: Discovered | None = None
        """What discovery found, once it has."""
        self.error: AuthError | None = None
        """The failure that ended the flow, if one did."""
        discovery = Discovery(
            self.server_url,
            profile,
            challenge=_challenge(www_authenticate),
            authorization_server=authorization_server,
            pkce=False,
        )
        self._steps = self._run(grant, discovery, now, tuple(token_types))
        self._step: Step = self._advance(None)

    def _run(
        self,
        grant: Grant,
        discovery: Discovery,
        now: float | None,
        token_types: tuple[str, ...],
    ) -> Generator[HttpRequest, HttpResponse, Authorized]:
        found = None
        while found is None:
            answer = yield discovery.request
            found = discovery.receive(answer.status, answer.body)
        self.found = found
        tokens = yield from grant.steps(found, now=now, token_types=token_types)
        return Authorized(tokens, TokenKey(found.server.issuer, found.resource))

    def _advance(self, answer: HttpResponse | None) -> Step:
        try:
            if answer is None:
                return next(self._steps)
            return self._steps.send(answer)
        except StopIteration as stop:
            result: Authorized = stop.value
            return result
        except AuthError as exc:
            self.error = exc
            self._step = _FAILED
            raise

    @property
    def failed(self) -> bool:
        """Whether the flow ended with a failure."""
        return self.error is not None

    def next_step(self) -> Step:
        """The request to make, or the result (the same until an answer is handed back)."""
        if self._step is _FAILED:
            raise AuthUsageError("the flow has failed")
        return self._step

    def receive_response(
        self,
        status: int,
        headers: Iterable[tuple[str, str]] = (),
        body: bytes = b"",
        *,
        now: float | None = None,
    ) -> None:
        """The answer to the request of :meth:`next_step`."""
        if not isinstance(self._step, HttpRequest):
            raise AuthUsageError("no HTTP request is waiting")
        self._step = self._advance(HttpResponse(status, tuple(headers), body, now))

    def receive_redirect(self, url: str) -> None:
        """Always a usage error: no grant here has a person step."""
        raise AuthUsageError("this grant has no authorization request, so no redirect")


_FAILED: Final = HttpRequest("GET", "about:failed")


# -------------------------------------------------------------------------- the grants


def _form(fields: Mapping[str, str]) -> bytes:
    return urlencode(list(fields.items()), quote_via=quote).encode("ascii")


def _post(
    endpoint: str, fields: Mapping[str, str], headers: Sequence[tuple[str, str]] = ()
) -> HttpRequest:
    return HttpRequest(
        "POST",
        endpoint,
        (("Content-Type", _FORM), ("Accept", "application/json"), *headers),
        _form(fields),
    )


def client_assertion(
    *,
    client_id: str,
    audience: str,
    key: str | bytes | Mapping[str, Any],
    algorithm: str = "ES256",
    now: float,
    lifetime: int = ASSERTION_LIFETIME,
    jti: str | None = None,
) -> str:
    """A ``private_key_jwt`` client assertion (RFC 7523 sections 2.2 and 3): ``iss`` and
    ``sub`` the ``client_id`` ("**MUST** contain a ``sub`` (subject) claim ... For client
    authentication, the subject **MUST** be the ``client_id`` of the OAuth client"), ``aud``
    the authorization server ("**MUST** contain an ``aud`` (audience) claim containing a
    value that identifies the authorization server as an intended audience": its issuer
    identifier here), ``exp`` (**MUST**), ``iat`` and a unique ``jti``, signed with ``key``
    (a PEM or a JWK) by ``algorithm``. ``now`` is seconds since the epoch."""
    from joserfc import jwt

    issued = int(now)
    claims = {
        "iss": client_id,
        "sub": client_id,
        "aud": audience,
        "iat": issued,
        "exp": issued + lifetime,
        "jti": jti or secrets.token_urlsafe(16),
    }
    signed: str = jwt.encode(
        {"alg": algorithm, "typ": "JWT"},
        claims,
        signing_key(key, algorithm),
        algorithms=[algorithm],
    )
    return signed


def _supported(meta: ServerMetadata, name: str) -> tuple[str, ...] | None:
    value = meta.raw.get(name)
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return tuple(value)
    return None


def _basic_or_post(client: ClientInfo, meta: ServerMetadata) -> AuthMethod:
    return client.method_for(meta.token_endpoint_auth_methods_supported)


def _token(answer: HttpResponse, token_types: Collection[str]) -> Tokens:
    return parse_token_response(answer.status, answer.body, now=answer.now, token_types=token_types)


@dataclass(frozen=True)
class ClientCredentials:
    """The client credentials grant (OAuth 2.1 section 4.2) of the OAuth Client Credentials
    extension: with ``private_key`` (a PEM or a JWK), ``private_key_jwt`` (RFC 7523 section
    2.2, the extension's RECOMMENDED method) signed by ``algorithm``; else with
    ``client_secret``, ``client_secret_basic`` (or ``client_secret_post`` when the server
    lists only that). ``scope``: the scope to ask for (by default as
    :meth:`Discovered.scope` says).

    Refused before any token request (``ServerMetadataError``): a
    server whose ``token_endpoint_auth_methods_supported`` omits ``private_key_jwt`` for a
    key, or whose ``token_endpoint_auth_signing_alg_values_supported`` omits
    ``algorithm`` (RFC 8414 section 2); one whose ``grant_types_supported`` omits
    ``client_credentials``."""

    client_id: str
    """The pre-registered client identifier (the extension: "This flow requires
    pre-registered client credentials")."""
    client_secret: str | None = field(default=None, repr=False)
    """The secret, for ``client_secret_basic``."""
    private_key: str | bytes | Mapping[str, Any] | None = field(default=None, repr=False)
    """The signing key, for ``private_key_jwt``."""
    algorithm: str = "ES256"
    """The JWS algorithm of the assertion."""
    scope: str | None = None
    """The scope to ask for."""

    def __post_init__(self) -> None:
        if (self.client_secret is None) == (self.private_key is None):
            raise AuthUsageError("client credentials need a client_secret or a private_key")

    def steps(
        self, found: Discovered, *, now: float | None, token_types: Collection[str] = ("bearer",)
    ) -> Steps:
        """The one token request."""
        meta = found.server
        grants = _supported(meta, "grant_types_supported")
        if grants is not None and GRANT_CLIENT_CREDENTIALS not in grants:
            raise ServerMetadataError(
                "the authorization server's grant_types_supported omits client_credentials"
            )
        fields = {"grant_type": GRANT_CLIENT_CREDENTIALS}
        scope = found.scope(self.scope)
        if scope:
            fields["scope"] = scope
        if self.private_key is not None:
            methods = meta.token_endpoint_auth_methods_supported
            if methods is None or "private_key_jwt" not in methods:
                raise ServerMetadataError(
                    "the authorization server does not list private_key_jwt in "
                    "token_endpoint_auth_methods_supported"
                )
            algs = _supported(meta, "token_endpoint_auth_signing_alg_values_supported")
            if algs is not None and self.algorithm not in algs:
                raise ServerMetadataError(
                    f"the authorization server does not list {self.algorithm} in "
                    "token_endpoint_auth_signing_alg_values_supported"
                )
            if now is None:
                raise AuthUsageError("a client assertion needs the time (now=)")
            fields["client_assertion_type"] = ASSERTION_TYPE_JWT
            fields["client_assertion"] = client_assertion(
                client_id=self.client_id,
                audience=meta.issuer,
                key=self.private_key,
                algorithm=self.algorithm,
                now=now,
            )
            fields["resource"] = found.resource
            answer = yield _post(meta.token_endpoint, fields)
        else:
            client = ClientInfo(self.client_id, self.client_secret)
            answer = yield token_request(
                meta.token_endpoint,
                fields,
                client=client,
                method=_basic_or_post(client, meta),
                resource=found.resource,
            )
        return _token(answer, token_types)


@dataclass(frozen=True)
class JwtBearer:
    """The JWT bearer grant (RFC 7523 section 2.1) with a given ``assertion`` (a workload
    identity's JWT: SEP-1933). With ``client_secret``, the client authenticates as
    :class:`ClientCredentials` does; else ``client_id``, if given, goes in the body (RFC
    7523 section 3.1: client authentication is optional with this grant). An error
    answer ends the flow: the same assertion is not sent again."""

    assertion: str = field(repr=False)
    """The JWT."""
    client_id: str | None = None
    """The client identifier, if it has one."""
    client_secret: str | None = field(default=None, repr=False)
    """Its secret, if it is confidential."""
    scope: str | None = None
    """The scope to ask for."""

    def steps(
        self, found: Discovered, *, now: float | None, token_types: Collection[str] = ("bearer",)
    ) -> Steps:
        """The one token request."""
        fields = {"grant_type": GRANT_JWT_BEARER, "assertion": self.assertion}
        scope = found.scope(self.scope)
        if scope:
            fields["scope"] = scope
        answer = yield _bearer_request(found, fields, self.client_id, self.client_secret)
        return _token(answer, token_types)


def _bearer_request(
    found: Discovered, fields: dict[str, str], client_id: str | None, secret: str | None
) -> HttpRequest:
    meta = found.server
    if client_id is not None and secret is not None:
        client = ClientInfo(client_id, secret)
        return token_request(
            meta.token_endpoint,
            fields,
            client=client,
            method=_basic_or_post(client, meta),
            resource=found.resource,
        )
    if client_id is not None:
        fields["client_id"] = client_id
    fields["resource"] = found.resource
    return _post(meta.token_endpoint, fields)


@dataclass(frozen=True)
class EnterpriseManaged:
    """Enterprise-Managed Authorization (cross-app access): exchange the person's
    ``id_token`` from the enterprise IdP at ``idp_token_endpoint`` for an ID-JAG (RFC 8693,
    section 4 of the extension), then the ID-JAG for an access token at the MCP server's
    authorization server (the JWT bearer grant, section 5) with ``client_id`` /
    ``client_secret`` (its registration there). At the IdP the client authenticates with
    ``idp_client_id`` (and ``idp_client_secret``, ``client_secret_basic``), when given.

    Refused: an exchange answer whose ``issued_token_type`` is not
    ``urn:ietf:params:oauth:token-type:id-jag`` (section 4.2: REQUIRED, "Indicates the
    type of token issued"), or without an ``access_token``
    (``TokenResponseError``)."""

    id_token: str = field(repr=False)
    """The identity assertion (an OpenID Connect ID token) for the person."""
    idp_token_endpoint: str
    """The IdP's token endpoint."""
    client_id: str
    """The client's identifier at the MCP server's authorization server."""
    client_secret: str | None = field(default=None, repr=False)
    """Its secret there."""
    idp_client_id: str | None = None
    """The client's identifier at the IdP."""
    idp_client_secret: str | None = field(default=None, repr=False)
    """Its secret there."""
    subject_token_type: str = TOKEN_TYPE_ID_TOKEN
    """The type of ``id_token`` (RFC 8693 section 3; SAML: ``...:saml2``)."""
    scope: str | None = None
    """The scope to ask for."""

    def __post_init__(self) -> None:
        check_endpoint(self.idp_token_endpoint, "the IdP token endpoint", "usage")

    def steps(
        self, found: Discovered, *, now: float | None, token_types: Collection[str] = ("bearer",)
    ) -> Steps:
        """The token exchange at the IdP, then the JWT bearer grant."""
        fields = {
            "grant_type": GRANT_TOKEN_EXCHANGE,
            "requested_token_type": TOKEN_TYPE_ID_JAG,
            "audience": found.server.issuer,
            "resource": found.resource,
            "subject_token": self.id_token,
            "subject_token_type": self.subject_token_type,
        }
        scope = found.scope(self.scope)
        if scope:
            fields["scope"] = scope
        if self.idp_client_id is not None and self.idp_client_secret is not None:
            idp = ClientInfo(self.idp_client_id, self.idp_client_secret)
            request = token_request(
                self.idp_token_endpoint,
                {k: v for k, v in fields.items() if k != "resource"},
                client=idp,
                method="client_secret_basic",
                resource=found.resource,
            )
        else:
            if self.idp_client_id is not None:
                fields["client_id"] = self.idp_client_id
            request = _post(self.idp_token_endpoint, fields)
        answer = yield request
        jag = _id_jag(answer)
        grant = {"grant_type": GRANT_JWT_BEARER, "assertion": jag}
        if scope:
            grant["scope"] = scope
        answer = yield _bearer_request(found, grant, self.client_id, self.client_secret)
        return _token(answer, token_types)


def _id_jag(answer: HttpResponse) -> str:
    """The ID-JAG of a token exchange answer (RFC 8693 section 2.2.1; the extension's 4.2)."""
    step = "token request"
    try:
        doc = orjson.loads(answer.body)
    except orjson.JSONDecodeError:
        doc = None
    if answer.status != 200:
        if isinstance(doc, dict) and isinstance(doc.get("error"), str):
            text = doc.get("error_description")
            raise TokenErrorResponse(
                answer.status, doc["error"], text if isinstance(text, str) else None
            )
        raise TokenResponseError(
            f"the IdP's token endpoint answered {answer.status} without an error object", step=step
        )
    if not isinstance(doc, dict):
        raise TokenResponseError("the token exchange answer is not a JSON object")
    issued = doc.get("issued_token_type")
    if issued != TOKEN_TYPE_ID_JAG:
        raise TokenResponseError(
            f"the token exchange issued {detail(issued)!r}, not an ID-JAG ({TOKEN_TYPE_ID_JAG})"
        )
    token = doc.get("access_token")
    if not isinstance(token, str) or not token:
        raise TokenResponseError("the token exchange answer has no access_token string")
    return token


# -------------------------------------------------------------------------- ClientAuth


class GrantAuth:
    """The :class:`~mcp_sansio.auth.ClientAuth` of a grant that needs no person: on a 401,
    a :class:`GrantFlow` of ``grant``; then ``Authorization: Bearer <token>`` on every
    request to the MCP server's origin (never elsewhere: RFC 8707, the token is for this
    resource). ``token_types``: the token types taken (``("bearer", "dpop")`` under
    :class:`~mcp_sansio.auth.DPoPAuth`).

    A 401 with the token a flow has just obtained (not expired at ``now``) is answered with
    a new flow at most ``max_retries`` times in a row; after a flow that an authorization
    server's error answer ended (``TokenErrorResponse``: the same
    credentials or assertion would be refused again), no new flow until :meth:`reset`.
    A 403 with ``error="insufficient_scope"`` asks once per challenged scope set for a
    token with the challenge's ``scope``; any other 403: None.
    """

    def __init__(
        self,
        server_url: str,
        grant: Grant,
        *,
        version: str,
        authorization_server: str | None = None,
        max_retries: int = 1,
        token_types: Collection[str] = ("bearer",),
    ) -> None:
        self.server_url = server_url
        """The MCP server's URL."""
        self.grant = grant
        """The grant."""
        self.version = version
        """The protocol version whose authorization text the discovery follows."""
        self.authorization: Authorized | None = None
        """The tokens in use, once a flow has ended."""
        self.max_retries = max_retries
        """New flows for a just-obtained token refused in a row."""
        self._authorization_server = authorization_server
        self._token_types = tuple(token_types)
        self._last: GrantFlow | None = None
        self._rejected = 0
        self._step_ups: set[frozenset[str]] = set()
        GrantFlow(server_url, grant, version=version)  # checks the arguments now

    def headers(self, method: str, url: str, *, now: float) -> Sequence[tuple[str, str]]:
        """``Authorization: Bearer <token>`` to the MCP server's origin (compared as
        :class:`~mcp_sansio.auth.OAuthClient` does: RFC 6454, the default port explicit),
        once held."""
        held = self.authorization
        here = _origin(url)
        if held is None or here is None or here != _origin(self.server_url):
            return ()
        return (held.tokens.authorization(),)

    def challenged(
        self, status: int, headers: Sequence[tuple[str, str]], *, now: float
    ) -> GrantFlow | None:
        """The flow that answers a 401 (or an ``insufficient_scope`` 403), or None."""
        last = self._last
        if last is not None and isinstance(last.error, TokenErrorResponse):
            return None
        values = [v for k, v in headers if k.lower() == "www-authenticate"]
        challenge = _challenge(values)
        if challenge is not None and challenge.error == "insufficient_scope":
            scopes = frozenset((challenge.scope or "").split())
            if scopes in self._step_ups:
                return None
            self._step_ups.add(scopes)
            return self._start(values, now)
        if status != 401:
            return None
        held = self.authorization
        if held is not None and not held.tokens.expired(now):
            if self._rejected >= self.max_retries:
                return None
            self._rejected += 1
        return self._start(values, now)

    def answered(self, status: int, headers: Sequence[tuple[str, str]], *, now: float) -> None:
        """Nothing: only a challenge (:meth:`challenged`) changes what is sent."""

    def authorized(self, result: Authorized, *, now: float) -> None:
        """Keep ``result``'s tokens for :meth:`headers`."""
        self.authorization = result

    def reset(self) -> None:
        """Forget the retry counts and the last failure (the tokens stay)."""
        self._last = None
        self._rejected = 0
        self._step_ups.clear()

    def _start(self, values: list[str], now: float) -> GrantFlow:
        flow = self._last = GrantFlow(
            self.server_url,
            self.grant,
            version=self.version,
            www_authenticate=values,
            authorization_server=self._authorization_server,
            now=now,
            token_types=self._token_types,
        )
        return flow
