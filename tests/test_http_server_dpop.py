"""The HTTP server taking DPoP-bound tokens (``ServerAuth(..., dpop=DPoPProofs())``, RFC 9449):
a proof checked at each request (the refusals of section 4.3, each with its reason), the
token bound to the proof's key (``cnf.jkt``), a DPoP-bound token sent as a Bearer one
refused (section 7.2), a replayed proof refused (section 11.1), the ``DPoP`` challenge with
``algs`` next to the Bearer one, the metadata's DPoP members, and only DPoP when required.
On the blocking runtime (real sockets, ``http.client``), with our client's ``DPoPKey``
making the proofs; at the end, our clients of the three runtimes with ``DPoPAuth``."""

from __future__ import annotations

import base64
import time
from typing import Any

import orjson
import pytest

pytest.importorskip("joserfc")
from joserfc import jwt
from test_http_server_auth import INIT, mint, request, serving

from mcp_sansio.auth import (
    Authorized,
    BadProof,
    DPoPAuth,
    DPoPKey,
    DPoPProofs,
    TokenKey,
    Tokens,
    bound_key,
    parse_www_authenticate,
)
from mcp_sansio.auth._client_auth import Flow
from mcp_sansio.auth._dpop import access_token_hash

KEY = DPoPKey.generate()


def dpop(token: str, proof: str) -> dict[str, str]:
    return {"authorization": f"DPoP {token}", "dpop": proof}


def bound(resource: str, key: DPoPKey = KEY, **claims: Any) -> str:
    return mint(resource, cnf={"jkt": key.thumbprint}, **claims)


def challenges(headers: Any) -> dict[str, dict[str, str]]:
    values = headers.get_all("www-authenticate") or []
    return {c.scheme: dict(c.params) for c in parse_www_authenticate(values)}


def call(listener: Any, headers: dict[str, str]) -> tuple[int, Any, bytes]:
    return request(listener, "POST", "/mcp", INIT, headers)


def test_a_bound_token_with_its_proof_is_taken() -> None:
    with serving(dpop=DPoPProofs()) as (listener, resource):
        token = bound(resource)
        proof = KEY.proof("POST", resource, now=time.time(), access_token=token)
        status, _, body = call(listener, dpop(token, proof))
        assert status == 200, body
        assert orjson.loads(body)["result"]["protocolVersion"] == "2025-11-25"


def test_metadata_and_challenges_name_dpop() -> None:
    with serving(dpop=DPoPProofs(algorithms=("ES256", "EdDSA"))) as (listener, _):
        status, _, body = request(listener, "GET", "/.well-known/oauth-protected-resource/mcp")
        doc = orjson.loads(body)
        assert doc["dpop_signing_alg_values_supported"] == ["ES256", "EdDSA"]
        assert doc["dpop_bound_access_tokens_required"] is False
        status, headers, _ = call(listener, {})
        assert status == 401
        found = challenges(headers)
        assert set(found) == {"bearer", "dpop"}
        assert found["dpop"]["algs"] == "ES256 EdDSA"
        assert "error" not in found["dpop"]
        assert "error" not in found["bearer"]
        assert found["dpop"]["resource_metadata"] == found["bearer"]["resource_metadata"]


def test_a_bound_token_as_bearer_is_refused() -> None:
    # RFC 9449 section 7.2: "a protected resource that supports both the DPoP and Bearer
    # schemes MUST reject a DPoP-bound access token received as a bearer token"
    with serving(dpop=DPoPProofs()) as (listener, resource):
        status, headers, body = call(listener, {"authorization": f"Bearer {bound(resource)}"})
        assert status == 401
        assert challenges(headers)["bearer"]["error"] == "invalid_token"
        assert b"section 7.2" in body
        # an unbound token as Bearer is still taken
        plain = mint(resource)
        assert call(listener, {"authorization": f"Bearer {plain}"})[0] == 200


def test_without_dpop_a_bound_token_as_bearer_is_taken() -> None:
    # a server that does not take DPoP is not bound by section 7.2 (it is "unaware")
    with serving() as (listener, resource):
        assert call(listener, {"authorization": f"Bearer {bound(resource)}"})[0] == 200


def test_required_takes_only_dpop() -> None:
    with serving(dpop=DPoPProofs(required=True)) as (listener, resource):
        status, headers, _ = call(listener, {"authorization": f"Bearer {mint(resource)}"})
        assert status == 401
        found = challenges(headers)
        assert set(found) == {"dpop"}
        assert "error" not in found["dpop"]  # an unsupported scheme: no error
        doc = orjson.loads(request(listener, "GET", "/.well-known/oauth-protected-resource")[2])
        assert doc["dpop_bound_access_tokens_required"] is True
        token = bound(resource)
        proof = KEY.proof("POST", resource, now=time.time(), access_token=token)
        assert call(listener, dpop(token, proof))[0] == 200


def _sign(header: dict[str, Any], claims: dict[str, Any], key: Any = None) -> str:
    return jwt.encode(header, claims, key if key is not None else KEY._key)


def _claims(resource: str, token: str, **changes: Any) -> dict[str, Any]:
    claims: dict[str, Any] = {
        "jti": f"j-{time.monotonic_ns()}",
        "htm": "POST",
        "htu": resource,
        "iat": int(time.time()),
        "ath": access_token_hash(token),
    }
    claims.update(changes)
    return {k: v for k, v in claims.items() if v is not None}


HEAD = {"typ": "dpop+jwt", "alg": "ES256", "jwk": KEY.public_jwk}
OTHER = DPoPKey.generate()


@pytest.mark.parametrize(
    ("case", "reason"),
    [
        ("no proof", b"no DPoP proof"),
        ("two proofs", b"more than one DPoP header"),
        ("not a jwt", b"not a well-formed JWT"),
        ("typ", b"typ is not dpop+jwt"),
        ("alg none", b"alg 'none'"),
        ("alg not taken", b"alg 'ES384'"),
        ("no jwk", b"no jwk"),
        ("private jwk", b"holds a private key"),
        ("no jti", b"no jti claim"),
        ("signature", b"signature does not verify"),
        ("htm", b"htm is not POST"),
        ("htu", b"htu is not"),
        ("old", b"outside the window"),
        ("future", b"outside the window"),
        ("ath", b"ath is not the hash"),
        ("ath missing", b"ath is not the hash"),
    ],
)
def test_each_proof_refusal(case: str, reason: bytes) -> None:
    with serving(dpop=DPoPProofs(algorithms=("ES256",))) as (listener, resource):
        token = bound(resource)
        good = _claims(resource, token)
        proofs: dict[str, Any] = {
            "no proof": None,
            "two proofs": [KEY.proof("POST", resource, now=time.time(), access_token=token)] * 2,
            "not a jwt": "abc.def",
            "typ": _sign({**HEAD, "typ": "JWT"}, good),
            "alg none": ".".join(
                base64.urlsafe_b64encode(orjson.dumps(part)).rstrip(b"=").decode()
                for part in ({**HEAD, "alg": "none"}, good)
            )
            + ".",
            "alg not taken": DPoPKey.generate("ES384").proof(
                "POST", resource, now=time.time(), access_token=token
            ),
            "no jwk": _sign({"typ": "dpop+jwt", "alg": "ES256"}, good),
            "private jwk": _sign({**HEAD, "jwk": KEY._key.as_dict(private=True)}, good),
            "no jti": _sign(HEAD, _claims(resource, token, jti=None)),
            "signature": _sign(HEAD, good, OTHER._key),
            "htm": _sign(HEAD, _claims(resource, token, htm="GET")),
            "htu": _sign(HEAD, _claims(resource, token, htu="http://127.0.0.1:1/mcp")),
            "old": _sign(HEAD, _claims(resource, token, iat=int(time.time()) - 3600)),
            "future": _sign(HEAD, _claims(resource, token, iat=int(time.time()) + 3600)),
            "ath": _sign(HEAD, _claims(resource, token, ath=access_token_hash("other"))),
            "ath missing": _sign(HEAD, _claims(resource, token, ath=None)),
        }
        proof = proofs[case]
        headers = {"authorization": f"DPoP {token}"}
        if isinstance(proof, list):  # http.client sends a dict's key once: two fields by hand
            status, found, body = _raw_two_proofs(listener, token, proof)
        else:
            if proof is not None:
                headers["dpop"] = proof
            status, found, body = call(listener, headers)
        assert status == 401, body
        (ch,) = [
            c
            for c in parse_www_authenticate(found.get_all("www-authenticate"))
            if c.scheme == "dpop"
        ]
        assert ch.params["error"] == "invalid_dpop_proof"
        assert reason in body, body
        assert token.encode() not in body


def _raw_two_proofs(listener: Any, token: str, proofs: list[str]) -> tuple[int, Any, bytes]:
    import http.client

    host, port = listener.address[:2]
    conn = http.client.HTTPConnection(host, port, timeout=10)
    try:
        conn.putrequest("POST", "/mcp")
        for name, value in (
            ("accept", "application/json, text/event-stream"),
            ("content-type", "application/json"),
            ("authorization", f"DPoP {token}"),
            ("dpop", proofs[0]),
            ("dpop", proofs[1]),
        ):
            conn.putheader(name, value)
        body = orjson.dumps(INIT)
        conn.putheader("content-length", str(len(body)))
        conn.endheaders(body)
        response = conn.getresponse()
        return response.status, response.headers, response.read()
    finally:
        conn.close()


def test_a_replayed_proof_is_refused() -> None:
    # RFC 9449 section 11.1: the jti of each proof, kept for its window
    proofs = DPoPProofs(max_proofs=4)
    with serving(dpop=proofs) as (listener, resource):
        token = bound(resource)
        proof = KEY.proof("POST", resource, now=time.time(), access_token=token)
        assert call(listener, dpop(token, proof))[0] == 200
        status, headers, body = call(listener, dpop(token, proof))
        assert status == 401
        assert b"used before" in body
        assert challenges(headers)["dpop"]["error"] == "invalid_dpop_proof"
        for _ in range(6):  # the table stays within its bound
            fresh = KEY.proof("POST", resource, now=time.time(), access_token=token)
            assert call(listener, dpop(token, fresh))[0] == 200
        assert len(proofs) == 4


def test_a_token_bound_to_another_key_or_to_none_is_refused() -> None:
    with serving(dpop=DPoPProofs()) as (listener, resource):
        for token, why in (
            (bound(resource, OTHER), b"bound to another key"),
            (mint(resource), b"not DPoP-bound"),
        ):
            proof = KEY.proof("POST", resource, now=time.time(), access_token=token)
            status, headers, body = call(listener, dpop(token, proof))
            assert status == 401
            assert why in body
            found = challenges(headers)
            assert found["dpop"]["error"] == "invalid_token"
            assert "error" not in found["bearer"]  # the error goes on the scheme used


def test_forbidden_goes_on_the_dpop_challenge() -> None:
    options = {"dpop": DPoPProofs(), "required_scopes": ("mcp:tools", "mcp:admin")}
    with serving(**options) as (listener, resource):
        token = bound(resource)
        proof = KEY.proof("POST", resource, now=time.time(), access_token=token)
        status, headers, _ = call(listener, dpop(token, proof))
        assert status == 403
        found = challenges(headers)
        assert found["dpop"]["error"] == "insufficient_scope"
        assert found["dpop"]["scope"] == "mcp:tools mcp:admin"


# ---------------------------------------------------------------------- unit


def test_check_returns_the_thumbprint_and_bound_key_reads_cnf() -> None:
    proofs = DPoPProofs()
    url = "https://mcp.example.com/mcp"
    now = 1_700_000_000.0
    proof = KEY.proof("POST", url + "?x=1", now=now, access_token="t0k")
    # the default port and the case of the host do not matter (RFC 3986 section 6.2.3)
    assert (
        proofs.check(
            proof, method="POST", target="https://MCP.example.com:443/mcp", token="t0k", now=now
        )
        == KEY.thumbprint
    )
    assert bound_key({"cnf": {"jkt": "abc"}}) == "abc"
    assert bound_key({"cnf": "abc"}) is None
    assert bound_key({}) is None


def test_settings_are_checked() -> None:
    from mcp_sansio.auth import AuthUsageError

    for bad in ({"algorithms": ()}, {"algorithms": ("HS256",)}, {"max_proofs": 0}, {"max_age": 0}):
        with pytest.raises(AuthUsageError):
            DPoPProofs(**bad)


@pytest.mark.parametrize("proof", ["", ".", "a.b.c", "x" * 9000, "é.é.é", "e30.e30.", "W10.W10.x"])
def test_junk_proofs_are_refused_with_a_reason(proof: str) -> None:
    verdict = DPoPProofs().check(proof, method="POST", target="https://h/mcp", token="t", now=0.0)
    assert isinstance(verdict, BadProof)
    assert verdict.reason


# ---------------------------------------------------------------------- our clients


class _Given:
    """A ClientAuth whose one flow hands over a DPoP-bound token it was given."""

    def __init__(self, token: str, url: str) -> None:
        self.token = token
        self.url = url
        self.held: Authorized | None = None

    def headers(self, method: str, url: str, *, now: float) -> list[tuple[str, str]]:
        return [] if self.held is None else [("Authorization", f"Bearer {self.token}")]

    def challenged(self, status: int, headers: Any, *, now: float) -> Flow | None:
        if self.held is not None:
            return None
        done = Authorized(Tokens(self.token, "DPoP"), TokenKey("https://as.example.com", self.url))

        class _Done:
            def next_step(self) -> Authorized:
                return done

            def receive_response(self, *args: Any, **kwargs: Any) -> None:
                raise AssertionError

            def receive_redirect(self, url: str) -> None:
                raise AssertionError

        return _Done()

    def answered(self, status: int, headers: Any, *, now: float) -> None:
        return None

    def authorized(self, result: Authorized, *, now: float) -> None:
        self.held = result


@pytest.mark.parametrize("runtime", ["blocking", "asyncio", "trio"])
def test_our_clients_with_dpop_auth(runtime: str) -> None:
    from test_http_client_auth import session

    proofs = DPoPProofs(required=True)
    with serving(dpop=proofs) as (_, resource):
        auth = DPoPAuth(_Given(bound(resource), resource), KEY)
        out = session(runtime, resource, [("whoami", {})], auth=auth)
        assert out == ["alice|mcp:tools"]
        assert auth.token_type == "DPoP"  # the 401 ran the flow: the token is DPoP-bound
        # the opening and the call each went with a proof of their own (a replayed one is
        # refused), and the server kept each
        assert len(proofs) >= 2


# ---------------------------------------------------------------------- fuzz

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**64 - 1)
    | st.floats(allow_nan=False)
    | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=8,
)


def _b64json(value: Any) -> str:
    return base64.urlsafe_b64encode(orjson.dumps(value)).rstrip(b"=").decode()


@settings(max_examples=300, deadline=None)
@given(
    jwk=st.dictionaries(
        st.sampled_from(["kty", "crv", "x", "y", "n", "e", "kid", "alg"]),
        st.sampled_from(["EC", "RSA", "OKP", "P-256", "P-999", "Ed25519", "AQAB", ""])
        | st.text(max_size=12)
        | _JSON,
        max_size=6,
    ),
    alg=st.sampled_from(["ES256", "EdDSA", "PS256", "RS256"]),
    claims=st.dictionaries(
        st.sampled_from(["jti", "htm", "htu", "iat", "ath", "nonce"]), _JSON, max_size=6
    ),
    signature=st.binary(max_size=80),
)
def test_any_proof_gets_a_verdict(
    jwk: dict[str, Any], alg: str, claims: dict[str, Any], signature: bytes
) -> None:
    header = {"typ": "dpop+jwt", "alg": alg, "jwk": jwk}
    sig = base64.urlsafe_b64encode(signature).rstrip(b"=").decode()
    proof = f"{_b64json(header)}.{_b64json(claims)}.{sig}"
    verdict = DPoPProofs().check(
        proof, method="POST", target="https://h.example/mcp", token="t", now=1.0
    )
    assert isinstance(verdict, BadProof)  # no valid signature can come of this


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=300))
def test_any_text_gets_a_verdict(proof: str) -> None:
    verdict = DPoPProofs().check(proof, method="POST", target="https://h/mcp", token="t", now=0.0)
    assert isinstance(verdict, BadProof)
