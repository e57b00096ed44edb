"""DPoP (RFC 9449) for any :class:`~mcp_sansio.auth.ClientAuth`, sans-IO: proofs for the
token requests and for every request to the MCP server, and the servers' nonces.

The MCP DPoP extension (SEP-1932, "DPoP Profile for MCP", Draft,
modelcontextprotocol/modelcontextprotocol pull request 1932; ``io.modelcontextprotocol/auth/dpop``)
"binds OAuth 2.0 access tokens to cryptographic key pairs controlled by MCP clients,
requiring clients to demonstrate possession of the corresponding private key with each
request". Not done here: the SEP's ``content_digest`` claim ("DPoP proofs must include a
cryptographic digest of the JSON-RPC request body"), as
:meth:`~mcp_sansio.auth.ClientAuth.headers` is not given the body (the suite's
``auth/dpop`` scenarios do not check it). What RFC 9449 asks, and this module does:

- a proof is a JWT with ``typ`` ``dpop+jwt``, an asymmetric ``alg`` and the public key as
  ``jwk`` in its header (section 4.2: the ``jwk`` "**MUST NOT** contain a private key"),
  and the claims ``jti`` (unique), ``htm`` (the method), ``htu`` ("The HTTP target URI
  ..., without query and fragment parts"), ``iat``; with an access token, ``ath`` (the
  base64url SHA-256 of its ASCII); with a server's nonce, ``nonce``;
- section 5: a token request carries a proof in the ``DPoP`` header; the answer's
  ``token_type`` is ``DPoP`` for a bound token;
- section 7.1: the token goes as ``Authorization: DPoP <token>`` with a proof that has
  ``ath``; the ``DPoP`` challenge takes the ``Bearer`` one's parameters;
- sections 8 and 9: an authorization server answers 400 ``error=use_dpop_nonce`` and a
  resource server 401 with a ``DPoP`` challenge ``error="use_dpop_nonce"``, each with a
  ``DPoP-Nonce`` header: the client sends the request again with a proof that carries that
  nonce. Section 8.2: a new nonce may come in "a ``DPoP-Nonce`` HTTP header in the HTTP 200
  (OK) response from the previous request. The client **MUST** use the new nonce value
  supplied for the next token request and for all subsequent token requests until the
  authorization server supplies a new nonce" (section 9: resource servers "provide the
  nonce using the ``DPoP-Nonce`` header in the same way"). So a nonce on any answer, a
  success or not, is used from then on; a ``DPoP-Nonce`` that is not the section 8.1
  syntax (``nonce = 1*NQCHAR``) is ignored.

:class:`DPoPAuth` wraps the :class:`~mcp_sansio.auth.ClientAuth` that gets the token (the
code flow's :class:`~mcp_sansio.auth.OAuthClient`, or a
:class:`~mcp_sansio.auth.GrantAuth`, each made with ``token_types=("bearer", "dpop")``
so that its flows take a ``DPoP`` token answer): it adds the proofs to its flows' token
requests (:class:`DPoPFlow`) and presents the token. Signing uses joserfc (the
``auth`` extra). Proofs' ``iat`` is the ``now`` the caller gives: a wall clock, seconds.
"""

from __future__ import annotations

import base64
import hashlib
import re
import secrets
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final
from urllib.parse import parse_qsl, urlsplit, urlunsplit

import orjson

from ._challenge import parse_www_authenticate
from ._client_auth import ClientAuth, Flow
from ._errors import AuthUsageError, ChallengeError, TokenResponseError, detail
from ._flow import Authorized, Step
from ._oauth import HttpRequest

__all__ = [
    "NONCE_ERROR",
    "DPoPAuth",
    "DPoPFlow",
    "DPoPKey",
    "access_token_hash",
    "htu",
    "key_type",
    "signing_key",
]

#: The error of a nonce challenge (RFC 9449 sections 8 and 9).
NONCE_ERROR: Final = "use_dpop_nonce"
#: The curve of each EC algorithm.
_CURVES: Final = {"ES256": "P-256", "ES384": "P-384", "ES512": "P-521"}
_FORM: Final = "application/x-www-form-urlencoded"
#: RFC 9449 section 8.1: ``nonce = 1*NQCHAR``; RFC 6749 Appendix A:
#: ``NQCHAR = %x21 / %x23-5B / %x5D-7E``.
_NONCE: Final = re.compile(r"[\x21\x23-\x5b\x5d-\x7e]+")


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def access_token_hash(token: str) -> str:
    """``ath`` (RFC 9449 section 4.2): "The value **MUST** be the result of a base64url
    encoding ... the SHA-256 hash of the ASCII encoding of the associated access token's
    value"."""
    return _b64(hashlib.sha256(token.encode("ascii")).digest())


def htu(url: str) -> str:
    """The ``htu`` of a request to ``url``: the URI without its query and fragment."""
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, parts.path or "/", "", ""))


class DPoPKey:
    """The client's DPoP key pair (one for the tokens it binds: a token is bound to the
    key's thumbprint, so the same key must sign every proof for it)."""

    def __init__(self, key: Any, algorithm: str) -> None:
        self._key = key
        self.algorithm = algorithm
        """The JWS algorithm of the proofs."""
        self.public_jwk: dict[str, Any] = dict(key.as_dict(private=False))
        """The public key, as the proofs' ``jwk`` header carries it."""
        self.thumbprint: str = key.thumbprint()
        """The JWK SHA-256 thumbprint (RFC 7638): the token's ``cnf.jkt``."""

    @classmethod
    def generate(cls, algorithm: str = "ES256") -> DPoPKey:
        """A new EC key for ``algorithm`` (ES256, ES384 or ES512)."""
        curve = _CURVES.get(algorithm)
        if curve is None:
            raise AuthUsageError(f"no key is generated for {detail(algorithm)!r} (ES256/384/512)")
        jwk = _joserfc_jwk()
        return cls(jwk.ECKey.generate_key(curve), algorithm)

    @classmethod
    def from_key(cls, key: str | bytes | Mapping[str, Any], algorithm: str) -> DPoPKey:
        """The key pair in ``key`` (a private PEM or JWK), signing with ``algorithm``."""
        return cls(signing_key(key, algorithm), algorithm)

    def proof(
        self,
        method: str,
        url: str,
        *,
        now: float,
        nonce: str | None = None,
        access_token: str | None = None,
        jti: str | None = None,
    ) -> str:
        """A DPoP proof for ``method`` ``url`` at ``now`` (seconds since the epoch)."""
        from joserfc import jwt

        claims: dict[str, Any] = {
            "jti": jti or secrets.token_urlsafe(16),
            "htm": method.upper(),
            "htu": htu(url),
            "iat": int(now),
        }
        if nonce is not None:
            claims["nonce"] = nonce
        if access_token is not None:
            claims["ath"] = access_token_hash(access_token)
        header = {"typ": "dpop+jwt", "alg": self.algorithm, "jwk": self.public_jwk}
        signed: str = jwt.encode(header, claims, self._key, algorithms=[self.algorithm])
        return signed


def key_type(algorithm: str) -> str:
    """The JWK ``kty`` of a JWS ``algorithm`` (RFC 7518 section 3.1; RFC 8037)."""
    if algorithm.startswith("ES"):
        return "EC"
    if algorithm.startswith(("RS", "PS")):
        return "RSA"
    if algorithm == "EdDSA":
        return "OKP"
    raise AuthUsageError(f"no asymmetric key type for {detail(algorithm)!r}")


def signing_key(key: str | bytes | Mapping[str, Any], algorithm: str) -> Any:
    """``key`` (a private PEM or JWK) as a joserfc key for ``algorithm``."""
    jwk = _joserfc_jwk()
    # the key type is named (joserfc warns when it must guess one)
    kty: Any = key_type(algorithm)
    try:
        return jwk.import_key(dict(key) if isinstance(key, Mapping) else key, kty)
    except Exception as exc:  # joserfc raises several kinds
        raise AuthUsageError(f"the private key cannot be read ({type(exc).__name__})") from None


def _joserfc_jwk() -> Any:
    try:
        from joserfc import jwk
    except ImportError:  # pragma: no cover - the auth extra is missing
        raise AuthUsageError("signing a JWT needs joserfc: install mcp-sansio[auth]") from None
    return jwk


def _header(headers: Iterable[tuple[str, str]], name: str) -> str | None:
    for key, value in headers:
        if key.lower() == name:
            return value
    return None


def _nonce(headers: Iterable[tuple[str, str]]) -> str | None:
    """The answer's ``DPoP-Nonce``, where it is one (section 8.1), else ``None``."""
    value = _header(headers, "dpop-nonce")
    return value if value is not None and _NONCE.fullmatch(value) else None


def _is_token_request(request: HttpRequest) -> bool:
    """A POST of a form with a ``grant_type``: a token request (registration is JSON)."""
    if request.method != "POST":
        return False
    kind = _header(request.headers, "content-type") or ""
    if not kind.lower().startswith(_FORM):
        return False
    try:
        fields = parse_qsl(request.body.decode("ascii"))
    except UnicodeDecodeError:
        return False
    return any(name == "grant_type" for name, _ in fields)


class DPoPFlow:
    """A :class:`~mcp_sansio.auth.Flow` that adds a DPoP proof to each token request of
    ``inner`` (and retries one refused with ``use_dpop_nonce`` once, with the nonce),
    and checks the token type of the answer: ``DPoP``, as RFC 9449 section 5 gives a
    bound token (``require_bound``, the default; else a ``Bearer`` answer is accepted and
    presented as such). Other requests and answers pass through unchanged."""

    def __init__(
        self,
        inner: Flow,
        key: DPoPKey,
        *,
        now: float,
        nonces: dict[str, str] | None = None,
        require_bound: bool = True,
    ) -> None:
        self.inner = inner
        """The flow that gets the token."""
        self.key = key
        """The key the proofs are signed with."""
        self.nonces: dict[str, str] = {} if nonces is None else nonces
        """The last nonce each server origin gave (shared with :class:`DPoPAuth`)."""
        self.token_type: str | None = None
        """The ``token_type`` of the token answer, once there is one."""
        self.require_bound = require_bound
        """Whether a ``Bearer`` answer is refused."""
        self._now = now
        self._source: HttpRequest | None = None
        self._sent: HttpRequest | None = None
        self._retried = False

    def next_step(self) -> Step:
        """The inner flow's step, a token request with its proof."""
        step = self.inner.next_step()
        if not isinstance(step, HttpRequest) or not _is_token_request(step):
            return step
        if self._source is not step or self._sent is None:
            self._source, self._retried = step, False
            self._sent = self._with_proof(step)
        return self._sent

    def _with_proof(self, request: HttpRequest) -> HttpRequest:
        proof = self.key.proof(
            request.method, request.url, now=self._now, nonce=self.nonces.get(_origin(request.url))
        )
        headers = tuple(h for h in request.headers if h[0].lower() != "dpop")
        return HttpRequest(request.method, request.url, (*headers, ("DPoP", proof)), request.body)

    def receive_response(
        self,
        status: int,
        headers: Iterable[tuple[str, str]] = (),
        body: bytes = b"",
        *,
        now: float | None = None,
    ) -> None:
        """The answer: a nonce challenge to a token request is answered here (once); a
        token answer's ``token_type`` is checked, then it goes to the inner flow."""
        if now is not None:
            self._now = now
        headers = tuple(headers)
        sent = self._sent
        if sent is None or self._source is not self.inner.next_step():
            self.inner.receive_response(status, headers, body, now=now)
            return
        nonce = _nonce(headers)
        if nonce is not None:
            self.nonces[_origin(sent.url)] = nonce
        if (
            status == 400
            and nonce is not None
            and not self._retried
            and _error(body) == NONCE_ERROR
        ):
            # RFC 9449 section 8: the server "requires the use of a nonce": the request
            # again, with a proof that carries it
            self._retried = True
            assert self._source is not None
            self._sent = self._with_proof(self._source)
            return
        self._source = self._sent = None
        if status == 200:
            body = self._checked(body)
        self.inner.receive_response(status, headers, body, now=now)

    def _checked(self, body: bytes) -> bytes:
        try:
            doc = orjson.loads(body)
        except orjson.JSONDecodeError:
            return body  # the inner flow refuses it
        if not isinstance(doc, dict) or not isinstance(doc.get("token_type"), str):
            return body
        kind = str(doc["token_type"])
        self.token_type = kind
        if kind.lower() == "bearer" and self.require_bound:
            raise TokenResponseError(
                "the authorization server issued a Bearer token to a DPoP token request "
                "(RFC 9449 section 5: a DPoP-bound token has token_type DPoP)"
            )
        return body

    def receive_redirect(self, url: str) -> None:
        """The inner flow's redirect."""
        self.inner.receive_redirect(url)


def _error(body: bytes) -> str | None:
    try:
        doc = orjson.loads(body)
    except orjson.JSONDecodeError:
        return None
    error = doc.get("error") if isinstance(doc, dict) else None
    return error if isinstance(error, str) else None


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme.lower()}://{parts.netloc.lower()}"


@dataclass(frozen=True)
class _Again:
    """A flow with no step: the same tokens, for a request sent again with a new nonce."""

    result: Authorized

    def next_step(self) -> Step:
        return self.result

    def receive_response(
        self,
        status: int,
        headers: Iterable[tuple[str, str]] = (),
        body: bytes = b"",
        *,
        now: float | None = None,
    ) -> None:
        raise AuthUsageError("no HTTP request is waiting")

    def receive_redirect(self, url: str) -> None:
        raise AuthUsageError("no redirect is waiting")


def _quoted(value: str) -> str:
    """``value`` as the inside of an RFC 9110 quoted-string."""
    return value.replace("\\", "\\\\").replace('"', '\\"')


def _dpop_as_bearer(values: Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
    """The headers with each ``DPoP`` challenge also given as a ``Bearer`` one (RFC 9449
    section 7.1: the ``DPoP`` scheme takes the ``Bearer`` scheme's parameters), for an
    inner :class:`~mcp_sansio.auth.ClientAuth` that reads ``Bearer`` challenges only."""
    out = list(values)
    fields = [v for k, v in values if k.lower() == "www-authenticate"]
    try:
        challenges = parse_www_authenticate(fields) if fields else []
    except ChallengeError:
        return out
    if not any(c.scheme == "bearer" for c in challenges):
        for challenge in challenges:
            if challenge.scheme == "dpop":
                params = ", ".join(
                    f'{k}="{_quoted(v)}"' for k, v in challenge.params.items() if k != "algs"
                )
                out.append(("WWW-Authenticate", f"Bearer {params}".rstrip()))
    return out


class DPoPAuth:
    """DPoP for the tokens ``inner`` gets (see the module docs): its flows' token
    requests carry proofs (:class:`DPoPFlow`); a bound token goes as
    ``Authorization: DPoP <token>`` with a fresh proof (``ath`` included) on each request
    to where ``inner`` would send it; a 401 with a ``use_dpop_nonce`` challenge and a
    ``DPoP-Nonce`` the request has not carried yet sends it again with that nonce (once
    per nonce); any other challenge goes to ``inner`` (a ``DPoP`` challenge also as a
    ``Bearer`` one, as RFC 9449 section 7.1 gives them the same parameters).

    A ``DPoP-Nonce`` on any answer of the MCP server (:meth:`answered`: a success too, as
    RFC 9449 sections 8.2 and 9 let it) goes in every proof to it from then on."""

    def __init__(self, inner: ClientAuth, key: DPoPKey, *, require_bound: bool = True) -> None:
        self.inner = inner
        """The :class:`~mcp_sansio.auth.ClientAuth` that gets the tokens."""
        self.key = key
        """The key every proof is signed with."""
        self.nonces: dict[str, str] = {}
        """The last nonce each authorization server (by origin) gave."""
        self.server_nonce: str | None = None
        """The last nonce the MCP server gave."""
        self.require_bound = require_bound
        """Whether a ``Bearer`` token answer to a DPoP token request is refused."""
        self.authorization: Authorized | None = None
        """The tokens in use, once a flow has ended."""
        self.token_type: str | None = None
        """Their ``token_type`` (``DPoP`` for a bound token)."""
        self._last: DPoPFlow | None = None
        self._tried: set[tuple[str, str]] = set()

    def headers(self, method: str, url: str, *, now: float) -> Sequence[tuple[str, str]]:
        """``inner``'s headers, its ``Authorization`` as a DPoP one with a proof."""
        out: list[tuple[str, str]] = []
        held = self.authorization
        for name, value in self.inner.headers(method, url, now=now):
            if (
                name.lower() == "authorization"
                and held is not None
                and (self.token_type or "").lower() == "dpop"
                and value.partition(" ")[2] == held.tokens.access_token
            ):
                token = held.tokens.access_token
                out.append((name, f"DPoP {token}"))
                proof = self.key.proof(
                    method, url, now=now, nonce=self.server_nonce, access_token=token
                )
                out.append(("DPoP", proof))
            else:
                out.append((name, value))
        return out

    def challenged(
        self, status: int, headers: Sequence[tuple[str, str]], *, now: float
    ) -> Flow | None:
        """A nonce challenge (once per nonce), else ``inner``'s flow with proofs."""
        nonce = _nonce(headers)
        if nonce is not None:
            self.server_nonce = nonce
        held = self.authorization
        if status == 401 and nonce is not None and held is not None:
            values = [v for k, v in headers if k.lower() == "www-authenticate"]
            if self._nonce_error(values):
                return self._nonce_retry(nonce, held)
        flow = self.inner.challenged(status, _dpop_as_bearer(headers), now=now)
        if flow is None:
            return None
        self._last = DPoPFlow(
            flow, self.key, now=now, nonces=self.nonces, require_bound=self.require_bound
        )
        return self._last

    def answered(self, status: int, headers: Sequence[tuple[str, str]], *, now: float) -> None:
        """Keep the MCP server's ``DPoP-Nonce``, if the answer has one; tell ``inner``."""
        nonce = _nonce(headers)
        if nonce is not None:
            self.server_nonce = nonce
        self.inner.answered(status, headers, now=now)

    def _nonce_retry(self, nonce: str, held: Authorized) -> Flow | None:
        # RFC 9449 section 9: the resource server "requires the use of a nonce": the
        # request again with a proof that carries it; a nonce already sent is not retried
        key = (held.tokens.access_token, nonce)
        if key in self._tried:
            return None
        self._tried.add(key)
        return _Again(held)

    @staticmethod
    def _nonce_error(values: list[str]) -> bool:
        try:
            challenges = parse_www_authenticate(values) if values else []
        except ChallengeError:
            return False
        return any(c.scheme == "dpop" and c.params.get("error") == NONCE_ERROR for c in challenges)

    def authorized(self, result: Authorized, *, now: float) -> None:
        """Keep ``result`` (and its token type) and tell ``inner``."""
        self.token_type = result.tokens.token_type
        self.authorization = result
        self.inner.authorized(result, now=now)
