"""The extensions' grants (mcp_sansio.auth._grants) driven with canned HTTP answers:
discovery, the token requests each grant makes (client credentials with client_secret_basic
and with a private_key_jwt assertion, the JWT bearer grant, enterprise-managed
authorization's token exchange then JWT bearer grant), their refusals, and GrantAuth's
retry rules."""

from __future__ import annotations

import base64
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import parse_qsl

import orjson
import pytest
from joserfc import jwk, jwt

from mcp_sansio.auth import (
    Authorized,
    AuthUsageError,
    HttpRequest,
    IssuerMismatchError,
    ResourceMetadataError,
    ResourceMismatchError,
    ServerMetadataError,
    TokenErrorResponse,
    TokenResponseError,
)
from mcp_sansio.auth._grants import (
    ASSERTION_TYPE_JWT,
    GRANT_JWT_BEARER,
    GRANT_TOKEN_EXCHANGE,
    TOKEN_TYPE_ID_JAG,
    TOKEN_TYPE_ID_TOKEN,
    ClientCredentials,
    EnterpriseManaged,
    Grant,
    GrantAuth,
    GrantFlow,
    JwtBearer,
)

MCP = "https://mcp.example.com/mcp"
PRM = "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"
PRM_ROOT = "https://mcp.example.com/.well-known/oauth-protected-resource"
AS = "https://as.example.com"
ASM = "https://as.example.com/.well-known/oauth-authorization-server"
TOKEN = "https://as.example.com/token"
IDP_TOKEN = "https://idp.example.com/token"
NOW = 1_800_000_000.0
CHALLENGE = f'Bearer resource_metadata="{PRM}", scope="mcp:read"'

Answer = tuple[int, Any]
Handler = Callable[[HttpRequest], Answer]


def as_metadata(**extra: Any) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "issuer": AS,
        "authorization_endpoint": f"{AS}/authorize",
        "token_endpoint": TOKEN,
        "grant_types_supported": ["client_credentials", GRANT_JWT_BEARER],
        "token_endpoint_auth_methods_supported": ["client_secret_basic", "private_key_jwt"],
        "token_endpoint_auth_signing_alg_values_supported": ["ES256"],
    }
    doc.update(extra)
    return {k: v for k, v in doc.items() if v is not None}


class World:
    """The MCP server's metadata, its authorization server's, and a token endpoint."""

    def __init__(
        self,
        *,
        prm: Mapping[str, Any] | None = None,
        asm: Mapping[str, Any] | None = None,
        token: Handler | None = None,
        idp: Handler | None = None,
    ) -> None:
        self.prm = dict(prm or {"resource": MCP, "authorization_servers": [AS]})
        self.asm = dict(asm or as_metadata())
        self.token = token or (lambda r: (200, {"access_token": "at-1", "token_type": "Bearer"}))
        self.idp = idp
        self.seen: list[HttpRequest] = []
        self.statuses: dict[str, int] = {}

    def answer(self, request: HttpRequest) -> Answer:
        self.seen.append(request)
        if request.url in self.statuses:
            return self.statuses[request.url], {"error": "nope"}
        if request.method == "GET" and request.url == PRM:
            return 200, self.prm
        if request.method == "GET" and request.url == ASM:
            return 200, self.asm
        if request.method == "POST" and request.url == TOKEN:
            return self.token(request)
        if request.method == "POST" and request.url == IDP_TOKEN and self.idp is not None:
            return self.idp(request)
        return 404, {"error": "not_found"}


def run(flow: GrantFlow, world: World) -> Authorized:
    """Make each request of ``flow`` against ``world`` until it ends."""
    for _ in range(10):
        step = flow.next_step()
        if isinstance(step, Authorized):
            return step
        assert isinstance(step, HttpRequest), step
        status, doc = world.answer(step)
        body = doc if isinstance(doc, bytes) else orjson.dumps(doc)
        flow.receive_response(status, [("content-type", "application/json")], body, now=NOW)
    raise AssertionError("the flow did not end")


def flow_of(grant: Grant, challenge: str | None = CHALLENGE) -> GrantFlow:
    return GrantFlow(MCP, grant, version="2025-11-25", www_authenticate=challenge, now=NOW)


def form(request: HttpRequest) -> dict[str, str]:
    return dict(parse_qsl(request.body.decode("ascii")))


def header(request: HttpRequest, name: str) -> str | None:
    return next((v for k, v in request.headers if k.lower() == name), None)


def basic(request: HttpRequest) -> tuple[str, str]:
    value = header(request, "authorization")
    assert value is not None
    assert value.startswith("Basic ")
    client_id, _, secret = base64.b64decode(value[6:]).decode().partition(":")
    return client_id, secret


def token_requests(world: World) -> list[HttpRequest]:
    return [r for r in world.seen if r.method == "POST"]


# -------------------------------------------------------------------------- client credentials


def test_client_credentials_basic() -> None:
    world = World()
    result = run(flow_of(ClientCredentials("cid", client_secret="s3cret")), world)
    assert [r.url for r in world.seen] == [PRM, ASM, TOKEN]
    (request,) = token_requests(world)
    assert basic(request) == ("cid", "s3cret")
    fields = form(request)
    assert fields == {"grant_type": "client_credentials", "scope": "mcp:read", "resource": MCP}
    assert result.tokens.access_token == "at-1"
    assert (result.key.issuer, result.key.resource) == (AS, MCP)


def test_client_credentials_scope_from_resource_metadata_then_given() -> None:
    world = World(
        prm={"resource": MCP, "authorization_servers": [AS], "scopes_supported": ["a", "b"]}
    )
    run(flow_of(ClientCredentials("cid", client_secret="s"), challenge=None), world)
    # no challenge: the well-known URI, then all of scopes_supported
    assert world.seen[0].url == PRM
    assert form(token_requests(world)[0])["scope"] == "a b"
    world = World()
    run(flow_of(ClientCredentials("cid", client_secret="s", scope="x")), world)
    assert form(token_requests(world)[0])["scope"] == "x"


def test_client_credentials_private_key_jwt() -> None:
    key = jwk.ECKey.generate_key("P-256")
    pem = key.as_pem(private=True)
    world = World()
    run(flow_of(ClientCredentials("cid", private_key=pem)), world)
    (request,) = token_requests(world)
    assert header(request, "authorization") is None
    fields = form(request)
    assert fields["grant_type"] == "client_credentials"
    assert fields["client_assertion_type"] == ASSERTION_TYPE_JWT
    assert "client_id" not in fields  # the extension: identified by the JWT's sub
    token = jwt.decode(fields["client_assertion"], jwk.import_key(key.as_dict(private=False)))
    claims = token.claims
    assert token.header["alg"] == "ES256"
    assert (claims["iss"], claims["sub"], claims["aud"]) == ("cid", "cid", AS)
    assert claims["iat"] == int(NOW)
    assert claims["exp"] > claims["iat"]
    assert isinstance(claims["jti"], str)
    assert claims["jti"]


def test_private_key_jwt_signed_by_another_key_does_not_verify() -> None:
    signer = jwk.ECKey.generate_key("P-256")
    other = jwk.ECKey.generate_key("P-256")
    world = World()
    run(flow_of(ClientCredentials("cid", private_key=signer.as_dict(private=True))), world)
    assertion = form(token_requests(world)[0])["client_assertion"]
    with pytest.raises(Exception, match="signature"):
        jwt.decode(assertion, jwk.import_key(other.as_dict(private=False)))


@pytest.mark.parametrize(
    ("asm", "match"),
    [
        (
            as_metadata(token_endpoint_auth_methods_supported=["client_secret_basic"]),
            "private_key_jwt",
        ),
        (as_metadata(token_endpoint_auth_methods_supported=None), "private_key_jwt"),
        (as_metadata(token_endpoint_auth_signing_alg_values_supported=["RS256"]), "ES256"),
        (as_metadata(grant_types_supported=["authorization_code"]), "client_credentials"),
    ],
)
def test_client_credentials_refused_by_metadata(asm: dict[str, Any], match: str) -> None:
    key = jwk.ECKey.generate_key("P-256").as_pem(private=True)
    world = World(asm=asm)
    flow = flow_of(ClientCredentials("cid", private_key=key))
    with pytest.raises(ServerMetadataError, match=match):
        run(flow, world)
    assert token_requests(world) == []
    assert flow.failed
    with pytest.raises(AuthUsageError):
        flow.next_step()


def test_client_credentials_needs_exactly_one_credential() -> None:
    with pytest.raises(AuthUsageError):
        ClientCredentials("cid")
    with pytest.raises(AuthUsageError):
        ClientCredentials("cid", client_secret="s", private_key="k")


def test_client_credentials_error_answer() -> None:
    world = World(token=lambda r: (401, {"error": "invalid_client", "error_description": "no"}))
    flow = flow_of(ClientCredentials("cid", client_secret="wrong"))
    with pytest.raises(TokenErrorResponse) as caught:
        run(flow, world)
    assert caught.value.error == "invalid_client"
    assert "wrong" not in str(caught.value)


def test_client_credentials_non_bearer_token_refused() -> None:
    world = World(token=lambda r: (200, {"access_token": "x", "token_type": "MAC"}))
    with pytest.raises(TokenResponseError):
        run(flow_of(ClientCredentials("cid", client_secret="s")), world)


# -------------------------------------------------------------------------- discovery


def test_discovery_resource_mismatch() -> None:
    world = World(prm={"resource": "https://evil.example.com/mcp", "authorization_servers": [AS]})
    with pytest.raises(ResourceMismatchError):
        run(flow_of(ClientCredentials("cid", client_secret="s")), world)
    assert token_requests(world) == []


def test_discovery_issuer_mismatch() -> None:
    world = World(asm=as_metadata(issuer="https://other.example.com"))
    with pytest.raises(IssuerMismatchError):
        run(flow_of(ClientCredentials("cid", client_secret="s")), world)
    assert token_requests(world) == []


def test_discovery_challenge_url_not_found_is_final() -> None:
    world = World()
    world.statuses[PRM] = 404
    with pytest.raises(ResourceMetadataError):
        run(flow_of(ClientCredentials("cid", client_secret="s")), world)
    # the URL the challenge named, and no well-known fallback
    assert [r.url for r in world.seen] == [PRM]


def test_discovery_well_known_falls_back_to_root() -> None:
    world = World()
    world.statuses[PRM] = 404
    world.prm["resource"] = "https://mcp.example.com"
    original = world.answer

    def answer(request: HttpRequest) -> Answer:
        if request.url == PRM_ROOT:
            world.seen.append(request)
            return 200, world.prm
        return original(request)

    world.answer = answer  # type: ignore[method-assign]
    run(flow_of(ClientCredentials("cid", client_secret="s"), challenge=None), world)
    assert [r.url for r in world.seen][:2] == [PRM, PRM_ROOT]


def test_dpop_challenge_names_the_metadata_too() -> None:
    world = World()
    run(
        flow_of(
            ClientCredentials("cid", client_secret="s"), challenge=f'DPoP resource_metadata="{PRM}"'
        ),
        world,
    )
    assert world.seen[0].url == PRM


def test_no_redirect_in_a_grant() -> None:
    flow = flow_of(ClientCredentials("cid", client_secret="s"))
    with pytest.raises(AuthUsageError):
        flow.receive_redirect("https://x.example.com/cb?code=1")


# -------------------------------------------------------------------------- JWT bearer (WIF)


def test_jwt_bearer_grant() -> None:
    world = World()
    run(flow_of(JwtBearer("workload.jwt.value", client_id="wl")), world)
    (request,) = token_requests(world)
    assert header(request, "authorization") is None
    assert form(request) == {
        "grant_type": GRANT_JWT_BEARER,
        "assertion": "workload.jwt.value",
        "scope": "mcp:read",
        "client_id": "wl",
        "resource": MCP,
    }


def test_jwt_bearer_grant_error_is_not_retried() -> None:
    world = World(token=lambda r: (400, {"error": "invalid_grant"}))
    auth = GrantAuth(MCP, JwtBearer("expired.jwt"), version="2025-11-25")
    flow = auth.challenged(401, [("WWW-Authenticate", CHALLENGE)], now=NOW)
    assert flow is not None
    with pytest.raises(TokenErrorResponse, match="invalid_grant"):
        run(flow, world)
    # the same assertion would be refused again: no new flow, no other grant
    assert auth.challenged(401, [("WWW-Authenticate", CHALLENGE)], now=NOW) is None
    auth.reset()
    assert auth.challenged(401, [("WWW-Authenticate", CHALLENGE)], now=NOW) is not None


# -------------------------------------------------------------------------- enterprise-managed


def idp_answer(issued: str = TOKEN_TYPE_ID_JAG) -> Handler:
    def answer(request: HttpRequest) -> Answer:
        return 200, {"access_token": "the.id.jag", "issued_token_type": issued, "token_type": "N_A"}

    return answer


def test_enterprise_managed_exchange_then_jwt_bearer() -> None:
    world = World(idp=idp_answer())
    grant = EnterpriseManaged(
        "the.id.token", IDP_TOKEN, "cid", client_secret="s", idp_client_id="idp-cid"
    )
    result = run(flow_of(grant), world)
    exchange, bearer = token_requests(world)
    assert exchange.url == IDP_TOKEN
    assert form(exchange) == {
        "grant_type": GRANT_TOKEN_EXCHANGE,
        "requested_token_type": TOKEN_TYPE_ID_JAG,
        "audience": AS,
        "resource": MCP,
        "subject_token": "the.id.token",
        "subject_token_type": TOKEN_TYPE_ID_TOKEN,
        "scope": "mcp:read",
        "client_id": "idp-cid",
    }
    assert bearer.url == TOKEN
    assert basic(bearer) == ("cid", "s")
    assert form(bearer) == {
        "grant_type": GRANT_JWT_BEARER,
        "assertion": "the.id.jag",
        "scope": "mcp:read",
        "resource": MCP,
    }
    assert result.tokens.access_token == "at-1"


def test_enterprise_managed_idp_secret_goes_basic() -> None:
    world = World(idp=idp_answer())
    grant = EnterpriseManaged(
        "t", IDP_TOKEN, "cid", client_secret="s", idp_client_id="i", idp_client_secret="is"
    )
    run(flow_of(grant), world)
    exchange = token_requests(world)[0]
    assert basic(exchange) == ("i", "is")
    assert "client_secret" not in form(exchange)


@pytest.mark.parametrize(
    "answer",
    [
        (
            200,
            {
                "access_token": "x",
                "issued_token_type": "urn:ietf:params:oauth:token-type:access_token",
                "token_type": "Bearer",
            },
        ),
        (200, {"issued_token_type": TOKEN_TYPE_ID_JAG, "token_type": "N_A"}),
        (200, b"not json"),
        (502, b""),
    ],
)
def test_enterprise_managed_exchange_refused(answer: Answer) -> None:
    world = World(idp=lambda r: answer)
    with pytest.raises(TokenResponseError):
        run(flow_of(EnterpriseManaged("t", IDP_TOKEN, "cid", client_secret="s")), world)
    # the authorization server never gets an assertion
    assert [r.url for r in token_requests(world)] == [IDP_TOKEN]


def test_enterprise_managed_idp_error() -> None:
    world = World(idp=lambda r: (400, {"error": "invalid_grant", "error_description": "bad token"}))
    with pytest.raises(TokenErrorResponse, match="invalid_grant"):
        run(flow_of(EnterpriseManaged("t", IDP_TOKEN, "cid", client_secret="s")), world)


def test_enterprise_managed_idp_endpoint_must_be_https() -> None:
    with pytest.raises(Exception, match="IdP token endpoint"):
        EnterpriseManaged("t", "http://idp.example.com/token", "cid")


# -------------------------------------------------------------------------- GrantAuth


def test_grant_auth_headers_and_retries() -> None:
    auth = GrantAuth(MCP, ClientCredentials("cid", client_secret="s"), version="2025-11-25")
    assert auth.headers("POST", MCP, now=NOW) == ()
    assert auth.challenged(403, [], now=NOW) is None
    flow = auth.challenged(401, [("WWW-Authenticate", CHALLENGE)], now=NOW)
    assert flow is not None
    auth.authorized(run(flow, World()), now=NOW)
    assert auth.headers("POST", MCP, now=NOW) == (("Authorization", "Bearer at-1"),)
    # the same origin with its default port written out; never to another origin
    assert auth.headers("POST", "https://MCP.example.com:443/mcp", now=NOW) != ()
    assert auth.headers("GET", "https://elsewhere.example.com/x", now=NOW) == ()
    assert auth.headers("GET", "http://mcp.example.com/mcp", now=NOW) == ()
    # a fresh token refused: one new flow, then none
    assert auth.challenged(401, [], now=NOW) is not None
    assert auth.challenged(401, [], now=NOW) is None


def test_grant_auth_step_up_once_per_scope() -> None:
    auth = GrantAuth(MCP, ClientCredentials("cid", client_secret="s"), version="2025-11-25")
    step_up = [("WWW-Authenticate", 'Bearer error="insufficient_scope", scope="mcp:write"')]
    flow = auth.challenged(403, step_up, now=NOW)
    assert flow is not None
    world = World()
    run(flow, world)
    assert form(token_requests(world)[0])["scope"] == "mcp:write"
    assert auth.challenged(403, step_up, now=NOW) is None


def test_assertion_needs_an_asymmetric_algorithm() -> None:
    key = jwk.ECKey.generate_key("P-256").as_pem(private=True)
    world = World(asm=as_metadata(token_endpoint_auth_signing_alg_values_supported=None))
    with pytest.raises(AuthUsageError, match="asymmetric"):
        run(flow_of(ClientCredentials("cid", private_key=key, algorithm="HS256")), world)
    assert token_requests(world) == []
