"""DPoP at the resource server (RFC 9449 sections 4.3, 7 and 11.1), sans-IO: the checks of a
proof that comes with an ``Authorization: DPoP <token>`` request, and the binding of the
token to the proof's key. The ``htu`` is compared after RFC 3986's case and port
normalization (section 4.3: "servers **SHOULD** employ syntax-based normalization ... and
scheme-based normalization ... before comparing the htu claim"; percent-encodings are
compared as they are).

What RFC 9449 asks of a resource server, and where it is checked:

- section 4.3, "To validate a DPoP proof, the receiving server **MUST** ensure the
  following": "there is not more than one DPoP HTTP request header field"; "the DPoP HTTP
  request header field value is a single and well-formed JWT"; "all required claims per
  Section 4.2 are contained in the JWT" (``jti``, ``htm``, ``htu``, ``iat``, and ``ath``
  with an access token); "the typ JOSE Header Parameter has the value dpop+jwt"; "the alg
  JOSE Header Parameter indicates a registered asymmetric digital signature algorithm ...
  is not none, is supported by the application, and is acceptable per local policy"; "the
  JWT signature verifies with the public key contained in the jwk JOSE Header Parameter";
  "the jwk JOSE Header Parameter does not contain a private key"; "the htm claim matches
  the HTTP method of the current request"; "the htu claim matches the HTTP URI value for
  the HTTP request in which the JWT was received, ignoring any query and fragment parts";
  "the creation time of the JWT, as determined by either the iat claim or a server managed
  timestamp via the nonce claim, is within an acceptable window"; "if presented to a
  protected resource in conjunction with an access token, ensure that the value of the
  ath claim equals the hash of that access token, and confirm that the public key to which
  the access token is bound matches the public key from the DPoP proof" (:class:`DPoPProofs`);
- section 7.1: the token comes as ``Authorization: DPoP <token>``; a failure is a ``DPoP``
  challenge with ``error`` ("``invalid_dpop_proof`` is used to indicate that the DPoP proof
  itself was deemed invalid"; ``invalid_token`` for the token and its binding) and ``algs``
  ("An ``algs`` parameter **SHOULD** be included");
- section 7.2: protected resources "simultaneously supporting both the ``DPoP`` and
  ``Bearer`` schemes ... **MUST** reject a DPoP-bound access token received as a bearer
  token" (a token with ``cnf.jkt``, section 6);
- section 11.1: "servers can store the ``jti`` value of each DPoP proof for the time window
  in which the respective DPoP proof JWT would be accepted to prevent multiple uses of the
  same DPoP proof", and "should reject DPoP proof JWTs with unnecessarily large ``jti``
  values or store only a hash thereof": a proof is taken once (a hash of its ``jti`` and
  key kept, :attr:`DPoPProofs.max_proofs` of them, the oldest forgotten first; a ``jti`` of
  more than 512 characters is refused); and "the server **MAY** accept DPoP proofs that
  carry an ``iat`` time in the reasonably near future" (``leeway``);
- section 11.6: "only asymmetric digital signature algorithms ... In particular, the
  algorithm ``none`` **MUST NOT** be allowed";
- RFC 9728 section 2: the metadata says ``dpop_signing_alg_values_supported`` and
  ``dpop_bound_access_tokens_required``.

Not done: server-provided nonces (section 9: resource servers "can also choose to provide a
nonce"; this one does not, and takes a proof's ``nonce`` claim as any other), and
SEP-1932's ``content_digest``. The target URI of every request is the resource identifier
(:attr:`~mcp_sansio.auth.ProtectedResource.resource`): behind a proxy the server cannot know
the URL the client used, and an MCP client addresses the server by that identifier. Proofs
are verified with joserfc (the ``auth`` extra), imported when a :class:`DPoPProofs` is made.
"""

from __future__ import annotations

import base64
import hashlib
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final
from urllib.parse import urlsplit

import orjson

from ._dpop import access_token_hash, key_type
from ._errors import AuthUsageError, detail
from ._oauth_client import _origin

__all__ = [
    "DPOP_ALGORITHMS",
    "MAX_JTI",
    "MAX_PROOF",
    "BadProof",
    "DPoPProofs",
    "bound_key",
]

#: The algorithms taken by default: the asymmetric ones of RFC 7518 and RFC 8037 that
#: joserfc verifies.
DPOP_ALGORITHMS: Final = ("ES256", "ES384", "ES512", "PS256", "PS384", "PS512", "RS256", "EdDSA")
#: The longest proof read, in characters (a bound on hostile input).
MAX_PROOF: Final = 8192
#: The longest ``jti`` taken (section 11.1: "reject DPoP proof JWTs with unnecessarily large
#: ``jti`` values").
MAX_JTI: Final = 512
#: The members of a JWK that only a private (or symmetric) key has (RFC 7518 section 6).
_PRIVATE: Final = frozenset({"d", "p", "q", "dp", "dq", "qi", "oth", "k"})
#: Section 4.2: the claims every proof has.
_REQUIRED: Final = ("jti", "htm", "htu", "iat")


@dataclass(frozen=True)
class BadProof:
    """A refused proof: 401 with a ``DPoP`` challenge, ``error="invalid_dpop_proof"``
    (RFC 9449 section 7.1). ``reason`` never quotes the proof or the token."""

    reason: str
    """Why (for the ``error_description``, and the server's log)."""


def bound_key(claims: Mapping[str, Any]) -> str | None:
    """The JWK thumbprint a token is bound to: its ``cnf.jkt`` (RFC 9449 section 6: a JWT's
    claim, or an introspection answer's member), or ``None`` for a token that is not bound."""
    cnf = claims.get("cnf")
    if not isinstance(cnf, Mapping):
        return None
    jkt = cnf.get("jkt")
    return jkt if isinstance(jkt, str) else None


def _target(url: str) -> tuple[tuple[str, str, int | None], str] | None:
    """``url`` for comparing targets: its origin (scheme and host in lower case, the port
    made explicit: RFC 3986 section 6.2.3) and its path, an empty one as ``/``; no query or
    fragment."""
    where = _origin(url)
    return None if where is None else (where, urlsplit(url).path or "/")


def _segment(part: str) -> Any:
    """A base64url JSON segment of a compact JWS, or ``None``."""
    try:
        return orjson.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))
    except (ValueError, orjson.JSONDecodeError):
        return None


class DPoPProofs:
    """What a server that takes DPoP-bound tokens checks of each request's proof, with the
    proofs seen lately (``ServerAuth(..., dpop=DPoPProofs())``; see the module docs).

    :param algorithms: the JWS algorithms taken (asymmetric only; the ``algs`` of the
        challenge and the metadata's ``dpop_signing_alg_values_supported``).
    :param required: whether only DPoP-bound tokens are taken (the ``Bearer`` scheme is then
        refused; the metadata's ``dpop_bound_access_tokens_required``).
    :param max_age: how old a proof's ``iat`` may be, in seconds (its window).
    :param leeway: how far in the future its ``iat`` may be (clocks differ), in seconds.
    :param max_proofs: the most proofs (their ``jti``) kept to refuse a replay: each costs
        about 200 bytes; past that the oldest are forgotten (and could be replayed within
        their window).
    """

    def __init__(
        self,
        *,
        algorithms: tuple[str, ...] = DPOP_ALGORITHMS,
        required: bool = False,
        max_age: float = 300.0,
        leeway: float = 5.0,
        max_proofs: int = 65536,
    ) -> None:
        try:
            import joserfc  # noqa: F401  (the auth extra: checked here, not at a request)
        except ImportError:  # pragma: no cover - the auth extra is missing
            raise AuthUsageError(
                "checking DPoP proofs needs joserfc: install mcp-sansio[auth]"
            ) from None
        algorithms = tuple(algorithms)
        if not algorithms:
            raise AuthUsageError("DPoPProofs needs at least one algorithm")
        for alg in algorithms:
            if alg not in DPOP_ALGORITHMS:
                # section 4.3: "a registered asymmetric digital signature algorithm"
                raise AuthUsageError(f"{detail(alg)!r} is not an asymmetric JWS algorithm taken")
        if max_age <= 0 or leeway < 0 or max_proofs < 1:
            raise AuthUsageError("max_age must be > 0, leeway >= 0 and max_proofs >= 1")
        self.algorithms = algorithms
        """The algorithms taken."""
        self.required = required
        """Whether only DPoP-bound tokens are taken."""
        self.max_age = max_age
        """The oldest ``iat`` taken, in seconds before now."""
        self.leeway = leeway
        """The furthest ``iat`` taken, in seconds after now."""
        self.max_proofs = max_proofs
        """The most proofs kept against replays."""
        self._seen: OrderedDict[bytes, float] = OrderedDict()

    def __len__(self) -> int:
        """How many proofs are kept against replays now."""
        return len(self._seen)

    def metadata(self) -> dict[str, Any]:
        """The protected resource metadata members (RFC 9728 section 2)."""
        return {
            "dpop_signing_alg_values_supported": list(self.algorithms),
            "dpop_bound_access_tokens_required": self.required,
        }

    def check(
        self, proof: str | None, *, method: str, target: str, token: str, now: float
    ) -> str | BadProof:
        """Check ``proof`` (the ``DPoP`` header's value; repeats joined with commas) of a
        ``method`` request to ``target`` (its URI) with the access token ``token`` at
        ``now`` (seconds since the epoch): the thumbprint (RFC 7638) of its key, for the
        token's ``cnf.jkt`` to be compared with (:func:`bound_key`), or why it is refused.
        A proof taken is kept: the same one again is a replay."""
        if proof is None:
            return BadProof("the request has no DPoP proof (RFC 9449 section 7.1)")
        if "," in proof:
            return BadProof(
                "more than one DPoP header (RFC 9449 section 4.3: there MUST NOT be more than one)"
            )
        if len(proof) > MAX_PROOF:
            return BadProof(f"the DPoP proof is longer than {MAX_PROOF} characters")
        proof = proof.strip()
        parts = proof.split(".")
        header = _segment(parts[0]) if len(parts) == 3 else None
        payload = _segment(parts[1]) if len(parts) == 3 else None
        if not isinstance(header, dict) or not isinstance(payload, dict):
            return BadProof("the DPoP proof is not a well-formed JWT (RFC 9449 section 4.3)")
        if header.get("typ") != "dpop+jwt":
            return BadProof("the DPoP proof's typ is not dpop+jwt (RFC 9449 section 4.3)")
        alg = header.get("alg")
        if not isinstance(alg, str) or alg not in self.algorithms:
            return BadProof(
                f"the DPoP proof's alg {detail(alg)!r} is not one this server takes "
                f"({' '.join(self.algorithms)}; RFC 9449 section 4.3)"
            )
        jwk = header.get("jwk")
        if not isinstance(jwk, dict):
            return BadProof("the DPoP proof has no jwk header (RFC 9449 section 4.2)")
        if _PRIVATE & jwk.keys():
            return BadProof(
                "the DPoP proof's jwk holds a private key (RFC 9449 section 4.3: it MUST NOT)"
            )
        for name in _REQUIRED:
            if name not in payload:
                return BadProof(f"the DPoP proof has no {name} claim (RFC 9449 section 4.2)")
        verified = self._verify(proof, jwk, alg)
        if isinstance(verified, BadProof):
            return verified
        thumbprint, claims = verified
        return self._claims(claims, thumbprint, method, target, token, now)

    @staticmethod
    def _verify(proof: str, jwk: dict[str, Any], alg: str) -> tuple[str, dict[str, Any]] | BadProof:
        from joserfc import jwk as jwks
        from joserfc import jwt
        from joserfc.errors import JoseError

        if jwk.get("kty") != key_type(alg):
            return BadProof(f"the DPoP proof's jwk is not a key for {alg}")
        try:
            key = jwks.import_key(jwk, jwk["kty"])
            claims = dict(jwt.decode(proof, key, algorithms=[alg]).claims)
            thumbprint: str = key.thumbprint()
        except (JoseError, ValueError, TypeError, KeyError):
            return BadProof(
                "the DPoP proof's signature does not verify with its jwk (RFC 9449 section 4.3)"
            )
        return thumbprint, claims

    def _claims(
        self,
        claims: dict[str, Any],
        thumbprint: str,
        method: str,
        target: str,
        token: str,
        now: float,
    ) -> str | BadProof:
        jti, htm, htu, iat = (claims.get(name) for name in _REQUIRED)
        if not isinstance(jti, str) or not jti or len(jti) > MAX_JTI:
            return BadProof(f"the DPoP proof's jti is not a string of 1 to {MAX_JTI} characters")
        if htm != method:
            return BadProof(
                f"the DPoP proof's htm is not {method} (RFC 9449 section 4.3: it MUST match "
                "the method of the request)"
            )
        where = _target(htu) if isinstance(htu, str) else None
        if where is None or where != _target(target):
            return BadProof(
                f"the DPoP proof's htu is not {detail(target)!r} (RFC 9449 section 4.3: it MUST "
                "match the URI of the request)"
            )
        if not isinstance(iat, (int, float)) or isinstance(iat, bool):
            return BadProof("the DPoP proof's iat is not a number")
        if iat < now - self.max_age or iat > now + self.leeway:
            return BadProof(
                "the DPoP proof's iat is outside the window this server takes (RFC 9449 "
                "section 4.3)"
            )
        if claims.get("ath") != access_token_hash(token):
            return BadProof(
                "the DPoP proof's ath is not the hash of the access token (RFC 9449 section 4.3)"
            )
        return self._fresh(jti, thumbprint, now)

    def _fresh(self, jti: str, thumbprint: str, now: float) -> str | BadProof:
        """Section 11.1: a proof is taken once in its window."""
        seen = self._seen
        while seen:  # the oldest first: O(1) per proof, amortized
            first, until = next(iter(seen.items()))
            if until > now:
                break
            del seen[first]
        key = hashlib.sha256(f"{thumbprint}\0{jti}".encode()).digest()
        if key in seen:
            return BadProof(
                "the DPoP proof was used before (RFC 9449 section 11.1: a jti seen in its "
                "window is a replay)"
            )
        seen[key] = now + self.max_age + self.leeway
        while len(seen) > self.max_proofs:
            seen.popitem(last=False)
        return thumbprint
