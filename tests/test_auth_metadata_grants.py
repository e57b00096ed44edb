"""Two things of the client found late.

``authorization_endpoint`` is REQUIRED "unless no grant types are supported that use the
authorization endpoint" (RFC 8414 section 2): a server that lists only person-less grants
(client credentials, the JWT bearer grant) may leave it out, and the extensions' grants run
against it; the code flow refuses such a server at its metadata step.

``OAuthClient`` steps up for at most ``max_scope_sets`` different scope sets: a server that
asks for a new set each time neither prompts the person without end nor grows its table."""

from __future__ import annotations

from collections.abc import Mapping

import orjson
import pytest

from mcp_sansio.auth import (
    PROFILES,
    AuthFlow,
    ClientCredentials,
    ClientInfo,
    Flow,
    GrantAuth,
    HttpRequest,
    MetadataCandidate,
    ServerMetadataError,
    parse_server_metadata,
)

AS = "https://as.example.com"
MCP = "https://mcp.example.com/mcp"
CANDIDATE = MetadataCandidate(f"{AS}/.well-known/oauth-authorization-server", AS)
PRM = {"resource": MCP, "authorization_servers": [AS]}


def _doc(**fields: object) -> dict[str, object]:
    return {
        "issuer": AS,
        "token_endpoint": f"{AS}/token",
        "code_challenge_methods_supported": ["S256"],
        **fields,
    }


@pytest.mark.parametrize(
    "grants", [["client_credentials"], ["urn:ietf:params:oauth:grant-type:jwt-bearer"], []]
)
def test_no_authorization_endpoint_with_only_personless_grants(grants: list[str]) -> None:
    meta = parse_server_metadata(
        _doc(grant_types_supported=grants), CANDIDATE, PROFILES["2025-11-25"]
    )
    assert meta.authorization_endpoint is None
    assert meta.token_endpoint == f"{AS}/token"


@pytest.mark.parametrize(
    "fields",
    [
        {},  # grant_types_supported omitted: the default has authorization_code and implicit
        {"grant_types_supported": ["authorization_code"]},
        {"grant_types_supported": ["client_credentials", "implicit"]},
    ],
)
def test_no_authorization_endpoint_is_refused_otherwise(fields: dict[str, object]) -> None:
    with pytest.raises(ServerMetadataError, match="no 'authorization_endpoint'"):
        parse_server_metadata(_doc(**fields), CANDIDATE, PROFILES["2025-11-25"])


def _answer(flow: Flow, doc: Mapping[str, object]) -> None:
    flow.receive_response(200, [("content-type", "application/json")], orjson.dumps(doc))


def test_client_credentials_runs_without_an_authorization_endpoint() -> None:
    auth = GrantAuth(
        MCP, ClientCredentials(client_id="svc", client_secret="s"), version="2025-11-25"
    )
    flow = auth.challenged(401, [("www-authenticate", "Bearer")], now=0.0)
    assert flow is not None
    _answer(flow, PRM)
    _answer(flow, _doc(grant_types_supported=["client_credentials"]))
    step = flow.next_step()
    assert isinstance(step, HttpRequest)
    assert step.url == f"{AS}/token"
    assert b"grant_type=client_credentials" in step.body


def test_the_code_flow_refuses_a_server_without_one() -> None:
    flow = AuthFlow(
        MCP,
        version="2025-11-25",
        client=ClientInfo("c"),
        redirect_uri="http://127.0.0.1:9/cb",
        www_authenticate="Bearer",
    )
    _answer(flow, PRM)
    with pytest.raises(ServerMetadataError, match="no grant type that uses an authorization"):
        _answer(flow, _doc(grant_types_supported=["client_credentials"]))
    assert flow.phase == "failed"


def test_step_ups_stop_after_max_scope_sets() -> None:
    from mcp_sansio.auth import OAuthClient

    client = OAuthClient(
        MCP, version="2025-11-25", redirect_uri="http://127.0.0.1:9/cb", max_scope_sets=3
    )
    flows = [
        client.challenged(
            403, [("www-authenticate", f'Bearer error="insufficient_scope", scope="s{i}"')], now=0.0
        )
        for i in range(6)
    ]
    assert [f is not None for f in flows] == [True, True, True, False, False, False]
    again = client.challenged(
        403, [("www-authenticate", 'Bearer error="insufficient_scope", scope="s0"')], now=0.0
    )
    assert again is not None  # a set already counted keeps its own limit
    client.reset()
    assert client.challenged(
        403, [("www-authenticate", 'Bearer error="insufficient_scope", scope="s9"')], now=0.0
    )
