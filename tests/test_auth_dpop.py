"""DPoP (mcp_sansio.auth._dpop, RFC 9449) with canned answers: the proofs' header and
claims, ath, proofs on token requests only, the authorization server's and the resource
server's use_dpop_nonce retried once with the nonce, the token type checked, the DPoP
scheme on requests, and a DPoP challenge read as the Bearer one."""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Sequence
from typing import Any

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st
from joserfc import jwk, jwt

from mcp_sansio.auth import (
    Authorized,
    AuthUsageError,
    HttpRequest,
    TokenErrorResponse,
    TokenKey,
    TokenResponseError,
    Tokens,
)
from mcp_sansio.auth._client_auth import Flow
from mcp_sansio.auth._dpop import DPoPAuth, DPoPFlow, DPoPKey, access_token_hash, htu
from mcp_sansio.auth._grants import GrantAuth, JwtBearer

MCP = "https://mcp.example.com/mcp"
PRM = "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"
AS = "https://as.example.com"
ASM = "https://as.example.com/.well-known/oauth-authorization-server"
TOKEN = "https://as.example.com/token"
NOW = 1_800_000_000.0
CHALLENGE = [("WWW-Authenticate", f'DPoP resource_metadata="{PRM}"')]


def decode(proof: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The header and claims of a proof, its signature checked with its own ``jwk``."""
    head = _header(proof)
    key = jwk.import_key(head["jwk"], "EC")
    verified = jwt.decode(proof, key, algorithms=[head["alg"]])
    return dict(verified.header), dict(verified.claims)


def _header(proof: str) -> dict[str, Any]:
    head = proof.split(".")[0]
    doc: dict[str, Any] = orjson.loads(base64.urlsafe_b64decode(head + "=" * (-len(head) % 4)))
    return doc


def header(request: HttpRequest, name: str) -> str | None:
    return next((v for k, v in request.headers if k.lower() == name), None)


# -------------------------------------------------------------------------- proofs


def test_ath_rfc_9449_example() -> None:
    # RFC 9449 section 7.1's example access token and its ath
    token = "Kz~8mXK1EalYznwH-LC-1fBAo.4Ljp~zsPE_NeO.gxU"
    assert access_token_hash(token) == "fUHyO2r2Z3DZ53EsNrWBb0xWXoaNy59IiKCAqksmQEo"


def test_htu_drops_query_and_fragment() -> None:
    assert htu("https://a.example.com/mcp?x=1#f") == "https://a.example.com/mcp"
    assert htu("https://a.example.com") == "https://a.example.com/"


def test_proof_header_and_claims() -> None:
    key = DPoPKey.generate()
    proof = key.proof("post", "https://as.example.com/token?x=1", now=NOW, nonce="n-1")
    head, claims = decode(proof)
    assert head["typ"] == "dpop+jwt"
    assert head["alg"] == "ES256"
    assert "d" not in head["jwk"]  # RFC 9449 4.2: no private key
    assert head["jwk"] == key.public_jwk
    assert claims["htm"] == "POST"
    assert claims["htu"] == "https://as.example.com/token"
    assert claims["iat"] == int(NOW)
    assert claims["nonce"] == "n-1"
    assert "ath" not in claims
    again = decode(key.proof("POST", TOKEN, now=NOW))[1]
    assert again["jti"] != claims["jti"]
    assert "nonce" not in again


def test_proof_with_access_token_has_ath() -> None:
    key = DPoPKey.generate("ES384")
    head, claims = decode(key.proof("GET", MCP, now=NOW, access_token="tok"))
    assert head["alg"] == "ES384"
    assert head["jwk"]["crv"] == "P-384"
    digest = hashlib.sha256(b"tok").digest()
    assert claims["ath"] == base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def test_from_key_and_thumbprint() -> None:
    pem = jwk.ECKey.generate_key("P-256").as_pem(private=True)
    key = DPoPKey.from_key(pem, "ES256")
    assert key.thumbprint == jwk.import_key(key.public_jwk, "EC").thumbprint()
    with pytest.raises(AuthUsageError):
        DPoPKey.generate("HS256")
    with pytest.raises(AuthUsageError):
        DPoPKey.from_key("not a key", "ES256")


# -------------------------------------------------------------------------- the flow


class Server:
    """Canned metadata and a token endpoint that can demand a nonce."""

    def __init__(self, *, nonce: str | None = None, token_type: str = "DPoP") -> None:
        self.nonce = nonce
        self.token_type = token_type
        self.token_requests: list[HttpRequest] = []
        self.gets: list[HttpRequest] = []

    def answer(self, request: HttpRequest) -> tuple[int, list[tuple[str, str]], bytes]:
        if request.method == "GET":
            self.gets.append(request)
            doc: dict[str, Any]
            if request.url == PRM:
                doc = {"resource": MCP, "authorization_servers": [AS]}
            else:
                doc = {
                    "issuer": AS,
                    "authorization_endpoint": f"{AS}/authorize",
                    "token_endpoint": TOKEN,
                }
            return 200, [], orjson.dumps(doc)
        self.token_requests.append(request)
        proof = header(request, "dpop")
        assert proof is not None
        sent = decode(proof)[1].get("nonce")
        if self.nonce is not None and sent != self.nonce:
            body = orjson.dumps({"error": "use_dpop_nonce"})
            return 400, [("dpop-nonce", self.nonce)], body
        doc = {"access_token": "bound-token", "token_type": self.token_type}
        return 200, [], orjson.dumps(doc)


def run(flow: Flow, server: Server) -> Authorized:
    for _ in range(10):
        step = flow.next_step()
        if isinstance(step, Authorized):
            return step
        assert isinstance(step, HttpRequest)
        assert flow.next_step() is step  # the same request until an answer
        status, headers, body = server.answer(step)
        flow.receive_response(status, headers, body, now=NOW)
    raise AssertionError("the flow did not end")


def dpop_auth() -> tuple[DPoPAuth, DPoPKey]:
    key = DPoPKey.generate()
    inner = GrantAuth(
        MCP, JwtBearer("wl.jwt"), version="2025-11-25", token_types=("bearer", "dpop")
    )
    return DPoPAuth(inner, key), key


def test_token_request_carries_proof_metadata_does_not() -> None:
    auth, key = dpop_auth()
    flow = auth.challenged(401, CHALLENGE, now=NOW)
    assert isinstance(flow, DPoPFlow)
    server = Server()
    result = run(flow, server)
    assert all(header(r, "dpop") is None for r in server.gets)
    (request,) = server.token_requests
    proof = header(request, "dpop")
    assert proof is not None
    head, claims = decode(proof)
    assert head["jwk"] == key.public_jwk
    assert (claims["htm"], claims["htu"]) == ("POST", TOKEN)
    assert flow.token_type == "DPoP"
    auth.authorized(result, now=NOW)
    assert auth.token_type == "DPoP"


def test_authorization_server_nonce_retried_once() -> None:
    auth, _ = dpop_auth()
    flow = auth.challenged(401, CHALLENGE, now=NOW)
    assert flow is not None
    server = Server(nonce="as-nonce")
    run(flow, server)
    first, second = server.token_requests
    assert first.body == second.body
    first_claims = decode(header(first, "dpop") or "")[1]
    second_claims = decode(header(second, "dpop") or "")[1]
    assert "nonce" not in first_claims
    assert second_claims["nonce"] == "as-nonce"
    assert first_claims["jti"] != second_claims["jti"]


def test_authorization_server_nonce_refused_twice_fails() -> None:
    class Stubborn(Server):
        def answer(self, request: HttpRequest) -> tuple[int, list[tuple[str, str]], bytes]:
            if request.method == "POST":
                self.token_requests.append(request)
                body = orjson.dumps({"error": "use_dpop_nonce"})
                return 400, [("dpop-nonce", f"n{len(self.token_requests)}")], body
            return super().answer(request)

    auth, _ = dpop_auth()
    flow = auth.challenged(401, CHALLENGE, now=NOW)
    assert flow is not None
    server = Stubborn()
    with pytest.raises(TokenErrorResponse, match="use_dpop_nonce"):
        run(flow, server)
    assert len(server.token_requests) == 2


def test_bearer_answer_refused_when_bound_required() -> None:
    auth, _ = dpop_auth()
    flow = auth.challenged(401, CHALLENGE, now=NOW)
    assert flow is not None
    with pytest.raises(TokenResponseError, match="Bearer"):
        run(flow, Server(token_type="Bearer"))


def test_bearer_answer_accepted_when_not_required() -> None:
    key = DPoPKey.generate()
    inner = GrantAuth(MCP, JwtBearer("wl.jwt"), version="2025-11-25")
    auth = DPoPAuth(inner, key, require_bound=False)
    flow = auth.challenged(401, CHALLENGE, now=NOW)
    assert flow is not None
    auth.authorized(run(flow, Server(token_type="Bearer")), now=NOW)
    assert auth.headers("POST", MCP, now=NOW) == [("Authorization", "Bearer bound-token")]


# -------------------------------------------------------------------------- requests


def authorized_auth() -> tuple[DPoPAuth, DPoPKey]:
    auth, key = dpop_auth()
    flow = auth.challenged(401, CHALLENGE, now=NOW)
    assert flow is not None
    auth.authorized(run(flow, Server()), now=NOW)
    return auth, key


def test_requests_use_dpop_scheme_and_fresh_proofs() -> None:
    auth, key = authorized_auth()
    headers = dict(auth.headers("POST", MCP + "?q=1", now=NOW))
    assert headers["Authorization"] == "DPoP bound-token"
    head, claims = decode(headers["DPoP"])
    assert head["jwk"] == key.public_jwk
    assert (claims["htm"], claims["htu"]) == ("POST", MCP)
    assert claims["ath"] == access_token_hash("bound-token")
    again = decode(dict(auth.headers("POST", MCP, now=NOW))["DPoP"])[1]
    assert again["jti"] != claims["jti"]
    # nothing for another origin (the inner ClientAuth sends its token nowhere else)
    assert list(auth.headers("POST", "https://other.example.com/x", now=NOW)) == []


def test_resource_server_nonce_retried_once_per_nonce() -> None:
    auth, _ = authorized_auth()
    held = auth.authorization
    nonce_challenge = [
        ("WWW-Authenticate", f'DPoP error="use_dpop_nonce", resource_metadata="{PRM}"'),
        ("DPoP-Nonce", "rs-1"),
    ]
    again = auth.challenged(401, nonce_challenge, now=NOW)
    assert again is not None
    assert again.next_step() is held  # no request: the same tokens, the request resent
    with pytest.raises(AuthUsageError):
        again.receive_response(200)
    proof = dict(auth.headers("POST", MCP, now=NOW))["DPoP"]
    assert decode(proof)[1]["nonce"] == "rs-1"
    # the same nonce refused again: no loop
    assert auth.challenged(401, nonce_challenge, now=NOW) is None
    # a new nonce: one more try
    rotated = [nonce_challenge[0], ("DPoP-Nonce", "rs-2")]
    assert auth.challenged(401, rotated, now=NOW) is not None


def test_nonce_header_without_nonce_error_is_a_plain_challenge() -> None:
    auth, _ = authorized_auth()
    plain = [("WWW-Authenticate", f'DPoP resource_metadata="{PRM}"'), ("DPoP-Nonce", "x")]
    flow = auth.challenged(401, plain, now=NOW)
    assert isinstance(flow, DPoPFlow)  # a new token, not a resend


def test_resource_server_nonce_on_a_success_is_used_from_then_on() -> None:
    # RFC 9449 section 8.2 (section 9: resource servers "in the same way"): a new nonce in
    # "a DPoP-Nonce HTTP header in the HTTP 200 (OK) response from the previous request.
    # The client MUST use the new nonce value supplied ... for all subsequent ... requests"
    auth, _ = authorized_auth()
    assert "nonce" not in decode(dict(auth.headers("POST", MCP, now=NOW))["DPoP"])[1]
    auth.answered(200, [("content-type", "application/json"), ("dpop-nonce", "rs-ok")], now=NOW)
    assert decode(dict(auth.headers("POST", MCP, now=NOW))["DPoP"])[1]["nonce"] == "rs-ok"
    auth.answered(202, [], now=NOW)  # an answer without one: the last one stays
    assert decode(dict(auth.headers("GET", MCP, now=NOW))["DPoP"])[1]["nonce"] == "rs-ok"
    auth.answered(200, [("dpop-nonce", "rs-2")], now=NOW)
    assert decode(dict(auth.headers("POST", MCP, now=NOW))["DPoP"])[1]["nonce"] == "rs-2"


@pytest.mark.parametrize("bad", ["", "a b", 'a"b', "a\\b", "caf\u00e9", "a\tb"])
def test_a_nonce_not_of_the_section_8_1_syntax_is_ignored(bad: str) -> None:
    # RFC 9449 section 8.1: nonce = 1*NQCHAR (%x21 / %x23-5B / %x5D-7E)
    auth, _ = authorized_auth()
    auth.answered(200, [("dpop-nonce", "good")], now=NOW)
    auth.answered(200, [("dpop-nonce", bad)], now=NOW)
    assert decode(dict(auth.headers("POST", MCP, now=NOW))["DPoP"])[1]["nonce"] == "good"
    challenge = [("WWW-Authenticate", 'DPoP error="use_dpop_nonce"'), ("DPoP-Nonce", bad)]
    flow = auth.challenged(401, challenge, now=NOW)
    assert not (flow is not None and flow.next_step() is auth.authorization)  # no resend


NQCHAR = set(range(0x21, 0x7F)) - {0x22, 0x5C}


@given(
    st.lists(
        st.tuples(st.sampled_from(["dpop-nonce", "DPoP-Nonce", "x"]), st.text(max_size=12)),
        max_size=4,
    ),
    st.integers(100, 599),
)
def test_any_answer_is_taken_without_error(headers: list[tuple[str, str]], status: int) -> None:
    auth = DPoPAuth(Recorder(), DPoPKey.generate("ES256"))
    auth.answered(status, headers, now=NOW)
    first = next((v for k, v in headers if k.lower() == "dpop-nonce"), None)
    valid = first is not None and first != "" and all(ord(c) in NQCHAR for c in first)
    assert auth.server_nonce == (first if valid else None)


def test_answers_go_to_the_inner_client_auth() -> None:
    inner = Recorder()
    auth = DPoPAuth(inner, DPoPKey.generate())
    auth.answered(200, [("dpop-nonce", "n")], now=NOW)
    assert inner.answers == [(200, [("dpop-nonce", "n")])]
    assert auth.server_nonce == "n"


def test_authorization_server_nonce_on_a_success_goes_in_the_next_token_request() -> None:
    class Giving(Server):
        def answer(self, request: HttpRequest) -> tuple[int, list[tuple[str, str]], bytes]:
            status, headers, body = super().answer(request)
            if request.method == "POST":
                headers = [*headers, ("dpop-nonce", f"as-{len(self.token_requests)}")]
            return status, headers, body

    auth, _ = dpop_auth()
    server = Giving()
    for _ in range(2):  # a token, then refused: a new one
        flow = auth.challenged(401, CHALLENGE, now=NOW)
        assert flow is not None
        auth.authorized(run(flow, server), now=NOW)
    first, second = server.token_requests
    assert "nonce" not in decode(header(first, "dpop") or "")[1]
    assert decode(header(second, "dpop") or "")[1]["nonce"] == "as-1"


class Recorder:
    """A ClientAuth that records the challenge headers it is given."""

    def __init__(self) -> None:
        self.seen: list[Sequence[tuple[str, str]]] = []
        self.answers: list[tuple[int, Sequence[tuple[str, str]]]] = []

    def headers(self, method: str, url: str, *, now: float) -> Sequence[tuple[str, str]]:
        return ()

    def challenged(self, status: int, headers: Sequence[tuple[str, str]], *, now: float) -> None:
        self.seen.append(headers)

    def answered(self, status: int, headers: Sequence[tuple[str, str]], *, now: float) -> None:
        self.answers.append((status, headers))

    def authorized(self, result: Authorized, *, now: float) -> None:
        raise AssertionError("not reached")


def test_dpop_challenge_also_given_as_bearer() -> None:
    inner = Recorder()
    auth = DPoPAuth(inner, DPoPKey.generate())
    value = 'DPoP algs="ES256", error="insufficient_scope", scope="a b"'
    assert auth.challenged(403, [("WWW-Authenticate", value)], now=NOW) is None
    (seen,) = inner.seen
    assert ("WWW-Authenticate", value) in seen
    assert ("WWW-Authenticate", 'Bearer error="insufficient_scope", scope="a b"') in seen
    # with a Bearer challenge present, nothing is added
    both = [("WWW-Authenticate", 'Bearer scope="a"'), ("WWW-Authenticate", "DPoP")]
    auth.challenged(401, both, now=NOW)
    assert inner.seen[1] == both


def test_tokens_unchanged_by_rewrite() -> None:
    # the inner flow sees token_type Bearer; the key of the result is the server's
    auth, _ = authorized_auth()
    held = auth.authorization
    assert held is not None
    assert held.key == TokenKey(AS, MCP)
    assert isinstance(held.tokens, Tokens)
    assert held.tokens.access_token == "bound-token"
