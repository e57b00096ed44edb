"""JwtVerifier (auth/_jwt.py): JWT access tokens (RFC 9068) minted here with joserfc and a
key made for the test, checked for their signature, ``alg`` (never ``none``), ``typ``,
``iss``, ``aud`` (this resource), ``exp``/``nbf`` with the leeway, and ``scope``/``scp``;
every refusal is an :class:`InvalidToken` whose reason never holds the token."""

from __future__ import annotations

import base64
from typing import Any

import orjson
import pytest

from mcp_sansio.auth import AuthUsageError, InsecureEndpointError
from mcp_sansio.auth._jwt import JwtVerifier
from mcp_sansio.auth._oauth import HttpRequest
from mcp_sansio.auth._resource import InvalidToken, Principal, Unavailable, Verdict

jwk = pytest.importorskip("joserfc.jwk")
jwt = pytest.importorskip("joserfc.jwt")

ISSUER = "https://auth.example.com"
RESOURCE = "https://mcp.example.com/mcp"
NOW = 1_800_000_000.0


def _key(kid: str) -> Any:
    return jwk.RSAKey.generate_key(2048, parameters={"kid": kid, "use": "sig"}, private=True)


KEY = _key("k1")
OTHER = _key("k1")  # same kid, another key: a forgery


def _jwks(*keys: Any) -> dict[str, Any]:
    return {"keys": [k.as_dict(private=False) for k in keys]}


def _claims(**over: Any) -> dict[str, Any]:
    claims: dict[str, Any] = {
        "iss": ISSUER,
        "aud": RESOURCE,
        "sub": "alice",
        "client_id": "c1",
        "scope": "files:read files:write",
        "iat": int(NOW) - 10,
        "exp": int(NOW) + 300,
    }
    claims.update(over)
    return {k: v for k, v in claims.items() if v is not None}


def _mint(key: Any = KEY, typ: str | None = "at+jwt", alg: str = "RS256", **over: Any) -> str:
    header: dict[str, Any] = {"alg": alg, "kid": "k1"}
    if typ is not None:
        header["typ"] = typ
    token: str = jwt.encode(header, _claims(**over), key)
    return token


def _verdict(token: str, verifier: JwtVerifier | None = None, now: float = NOW) -> Verdict:
    v = verifier or JwtVerifier(issuer=ISSUER, jwks=_jwks(KEY))
    step = v.verify(token, resource=RESOURCE, now=now).next_step()
    assert not isinstance(step, HttpRequest)
    return step


def _refused(token: str, verifier: JwtVerifier | None = None, now: float = NOW) -> str:
    verdict = _verdict(token, verifier, now)
    assert isinstance(verdict, InvalidToken), verdict
    assert len(token) < 8 or token not in verdict.reason
    for part in token.split("."):
        assert len(part) < 8 or part not in verdict.reason
    return verdict.reason


def test_valid_token_gives_its_principal() -> None:
    verdict = _verdict(_mint())
    assert isinstance(verdict, Principal)
    assert verdict.subject == "alice"
    assert verdict.client_id == "c1"
    assert verdict.scopes == frozenset({"files:read", "files:write"})
    assert verdict.issuer == ISSUER
    assert verdict.audience == (RESOURCE,)
    assert verdict.expires_at == NOW + 300


def test_scp_list_and_audience_list() -> None:
    verdict = _verdict(_mint(scope=None, scp=["a", "b"], aud=["other", RESOURCE]))
    assert isinstance(verdict, Principal)
    assert verdict.scopes == frozenset({"a", "b"})
    assert verdict.audience == ("other", RESOURCE)


def test_expired_token_is_refused() -> None:
    # RFC 7519 section 4.1.4: on or after exp it MUST NOT be accepted (60 s leeway)
    token = _mint(exp=int(NOW) - 61)
    assert "expired" in _refused(token)
    fresh = JwtVerifier(issuer=ISSUER, jwks=_jwks(KEY))
    assert isinstance(_verdict(_mint(exp=int(NOW) - 30), fresh), Principal)  # in the leeway
    strict = JwtVerifier(issuer=ISSUER, jwks=_jwks(KEY), leeway=0)
    assert "expired" in _refused(_mint(exp=int(NOW)), strict)


def test_not_yet_valid_token_is_refused() -> None:
    assert "not valid yet" in _refused(_mint(nbf=int(NOW) + 120))


def test_no_exp_is_refused() -> None:
    assert "exp" in _refused(_mint(exp=None))


def test_forged_token_is_refused() -> None:
    assert "signature" in _refused(_mint(key=OTHER))


def test_tampered_payload_is_refused() -> None:
    head, _, sig = _mint().split(".")
    payload = base64.urlsafe_b64encode(orjson.dumps(_claims(sub="mallory"))).rstrip(b"=")
    assert "signature" in _refused(f"{head}.{payload.decode()}.{sig}")


def test_other_audience_is_refused() -> None:
    assert "aud" in _refused(_mint(aud="https://other.example.com/mcp"))
    assert "aud" in _refused(_mint(aud=None))  # MCP: the audience must be this resource


def test_other_issuer_is_refused() -> None:
    assert "iss" in _refused(_mint(iss="https://evil.example.com"))


def test_alg_none_is_refused() -> None:
    def b64(obj: object) -> str:
        return base64.urlsafe_b64encode(orjson.dumps(obj)).rstrip(b"=").decode()

    token = f"{b64({'alg': 'none', 'typ': 'at+jwt'})}.{b64(_claims())}."
    assert "alg" in _refused(token)
    with pytest.raises(AuthUsageError):
        JwtVerifier(issuer=ISSUER, jwks=_jwks(KEY), algorithms=("RS256", "none"))


def test_hmac_with_the_public_key_is_refused() -> None:
    # the key confusion attack: HS256 "signed" with the public key's bytes
    secret = jwk.OctKey.import_key(orjson.dumps(KEY.as_dict(private=False)))
    assert "alg" in _refused(_mint(key=secret, alg="HS256"))


def test_typ_must_be_at_jwt() -> None:
    # RFC 9068 section 4: MUST reject tokens carrying any other type value
    assert "typ" in _refused(_mint(typ="JWT"))
    assert "typ" in _refused(_mint(typ=None))
    lax = JwtVerifier(issuer=ISSUER, jwks=_jwks(KEY), token_types=None)
    assert isinstance(_verdict(_mint(typ="JWT"), lax), Principal)
    assert isinstance(_verdict(_mint(typ="application/at+jwt")), Principal)


@pytest.mark.parametrize("token", ["", "abc", "a.b", "a.b.c", "!!!.e30.x", "e30.e30.e30"])
def test_not_a_jwt_is_refused(token: str) -> None:
    _refused(token)


def test_bad_scope_claim_is_refused() -> None:
    assert "scope" in _refused(_mint(scope=["a"]))


def test_audience_option_overrides_the_resource() -> None:
    v = JwtVerifier(issuer=ISSUER, jwks=_jwks(KEY), audience="api://files")
    assert isinstance(_verdict(_mint(aud="api://files"), v), Principal)
    _refused(_mint(), v)


def test_verdicts_are_cached_until_expiry() -> None:
    v = JwtVerifier(issuer=ISSUER, jwks=_jwks(KEY), leeway=0)
    token = _mint(exp=int(NOW) + 100)
    assert isinstance(_verdict(token, v), Principal)
    assert len(v.cache) == 1
    assert token not in repr(v.cache._items)
    assert isinstance(_verdict(token, v, now=NOW + 99), Principal)
    _refused(token, v, now=NOW + 100)


def test_usage_errors() -> None:
    with pytest.raises(AuthUsageError):
        JwtVerifier(issuer=ISSUER)  # neither jwks nor jwks_url
    with pytest.raises(AuthUsageError):
        JwtVerifier(issuer=ISSUER, jwks={"keys": "no"})
    with pytest.raises(AuthUsageError):
        JwtVerifier(issuer=ISSUER, jwks=_jwks(KEY), algorithms=())


def test_jwks_url_is_fetched_by_the_runtime() -> None:
    v = JwtVerifier(issuer=ISSUER, jwks_url=f"{ISSUER}/jwks")
    step = v.verify(_mint(), resource=RESOURCE, now=NOW)
    request = step.next_step()
    assert isinstance(request, HttpRequest)
    assert request.method == "GET"
    assert request.url == f"{ISSUER}/jwks"
    step.receive_response(200, (), orjson.dumps(_jwks(KEY)), now=NOW)
    assert isinstance(step.next_step(), Principal)
    # the keys are kept: the next token is decided at once
    again = v.verify(_mint(sub="bob"), resource=RESOURCE, now=NOW + 1).next_step()
    assert isinstance(again, Principal)


def test_a_failed_jwks_fetch_is_no_verdict_on_the_token() -> None:
    """No keys, so the token cannot be checked: Unavailable (503), not InvalidToken (401
    ``invalid_token`` would tell the client its token is bad), not cached, and the JWKS is
    fetched again after ``jwks_min_refresh``, whether the token names a key id or not."""
    v = JwtVerifier(issuer=ISSUER, jwks_url=f"{ISSUER}/jwks", jwks_min_refresh=60)
    step = v.verify(_mint(), resource=RESOURCE, now=NOW)
    assert isinstance(step.next_step(), HttpRequest)
    step.receive_response(500, (), b"oops", now=NOW)
    verdict = step.next_step()
    assert isinstance(verdict, Unavailable)
    assert verdict.retry_after == 60
    assert "500" in verdict.reason
    assert len(v.cache) == 0
    no_kid = jwt.encode({"alg": "RS256", "typ": "at+jwt"}, _claims(), KEY)
    # within jwks_min_refresh: no new fetch, still unavailable
    assert isinstance(v.verify(no_kid, resource=RESOURCE, now=NOW + 30).next_step(), Unavailable)
    # after it: fetched again, and the token is then checked
    again = v.verify(no_kid, resource=RESOURCE, now=NOW + 61)
    assert isinstance(again.next_step(), HttpRequest)
    again.receive_response(200, (), orjson.dumps(_jwks(KEY)), now=NOW + 61)
    assert isinstance(again.next_step(), Principal)


def test_an_embedded_key_or_an_unknown_kid_is_not_trusted() -> None:
    # a token carrying its own key in the header (``jwk``, RFC 7515 section 4.1.3) is
    # checked against the issuer's keys only; a kid the key set lacks verifies with none
    header = {"alg": "RS256", "typ": "at+jwt", "kid": "k1", "jwk": OTHER.as_dict(private=False)}
    assert "signature" in _refused(jwt.encode(header, _claims(), OTHER))
    header = {"alg": "RS256", "typ": "at+jwt", "kid": "unknown"}
    assert "signature" in _refused(jwt.encode(header, _claims(), KEY))
    # with no kid the key set's key is tried
    header = {"alg": "RS256", "typ": "at+jwt"}
    assert isinstance(_verdict(jwt.encode(header, _claims(), KEY)), Principal)


def test_a_verdict_for_one_resource_is_not_reused_for_another() -> None:
    # MCP: servers "MUST validate that access tokens were issued specifically for them as
    # the intended audience": one verifier shared by two resources must not take at the
    # second a token it accepted (and cached) for the first
    v = JwtVerifier(issuer=ISSUER, jwks=_jwks(KEY))
    token = _mint()
    assert isinstance(v.verify(token, resource=RESOURCE, now=NOW).next_step(), Principal)
    other = v.verify(token, resource="https://other.example.com/mcp", now=NOW).next_step()
    assert isinstance(other, InvalidToken)


def test_a_jwks_url_must_be_https_off_loopback() -> None:
    """Keys fetched over plain http from another host could be anyone's: every
    authorization server endpoint "**MUST** be served over HTTPS" (MCP, Communication
    Security); loopback is taken for tests and local servers."""
    with pytest.raises(InsecureEndpointError):
        JwtVerifier(issuer=ISSUER, jwks_url="http://keys.example.com/jwks")
    assert JwtVerifier(issuer=ISSUER, jwks_url="http://127.0.0.1:9/jwks").jwks_url
