"""Discovery (mcp_sansio.auth.Discovery), alone and as the first steps of both flows.

The code flow (AuthFlow) and the extensions' grants (GrantFlow) run the one Discovery, so
for the same servers they make the same GETs in the same order, and refuse the same
documents. Each text's differences are pinned here: a grant checks no PKCE support (it
sends no authorization request), and in 2025-03-26 only a 404 means the default
endpoints."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson
import pytest

from mcp_sansio.auth import (
    PROFILES,
    AuthError,
    AuthFlow,
    Authorized,
    ClientCredentials,
    ClientInfo,
    Discovered,
    Discovery,
    GrantFlow,
    HttpRequest,
    OpenUrl,
    PkceUnsupportedError,
    ResourceMetadataError,
    ServerMetadataError,
    bearer_challenge,
)

MCP = "https://mcp.example.com/mcp"
PRM = "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"
PRM_ROOT = "https://mcp.example.com/.well-known/oauth-protected-resource"
AS = "https://as.example.com/tenant"
VERSIONS = sorted(PROFILES)


def as_doc(issuer: str = AS, **extra: Any) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "issuer": issuer,
        "authorization_endpoint": f"{issuer}/authorize",
        "token_endpoint": f"{issuer}/token",
        "registration_endpoint": f"{issuer}/register",
        "code_challenge_methods_supported": ["S256"],
    }
    doc.update(extra)
    return {k: v for k, v in doc.items() if v is not None}


def answer(documents: Mapping[str, tuple[int, Any]], request: HttpRequest) -> tuple[int, bytes]:
    status, doc = documents.get(request.url, (404, {"error": "not_found"}))
    return status, orjson.dumps(doc)


def metadata_gets(
    flow: AuthFlow | GrantFlow, documents: Mapping[str, tuple[int, Any]]
) -> list[str]:
    """The URLs ``flow`` GETs before its first other step (its failure raised)."""
    urls: list[str] = []
    for _ in range(10):
        step = flow.next_step()
        if not isinstance(step, HttpRequest) or step.method != "GET":
            return urls
        urls.append(step.url)
        status, body = answer(documents, step)
        flow.receive_response(status, [], body, now=0.0)
    raise AssertionError("discovery did not end")


def outcome(
    flow: AuthFlow | GrantFlow, documents: Mapping[str, tuple[int, Any]]
) -> tuple[list[str], str | None]:
    """The URLs ``flow`` GETs, and the name of the error that ended it, if one did."""
    urls: list[str] = []
    for _ in range(10):
        step = flow.next_step()
        if not isinstance(step, HttpRequest) or step.method != "GET":
            return urls, None
        urls.append(step.url)
        status, body = answer(documents, step)
        try:
            flow.receive_response(status, [], body, now=0.0)
        except AuthError as e:
            return urls, f"{type(e).__name__}: {e}"
    raise AssertionError("discovery did not end")


def world(version: str) -> dict[str, tuple[int, Any]]:
    """Resource metadata at the root only, an issuer with a path whose RFC 8414 URI is
    404: OpenID Connect's path-appended URI answers from 2025-11-25 on (2025-06-18 names
    RFC 8414 only, so there discovery fails)."""
    return {
        PRM_ROOT: (200, {"resource": MCP, "authorization_servers": [AS]}),
        "https://as.example.com/tenant/.well-known/openid-configuration": (200, as_doc()),
    }


def code_flow(version: str, challenge: str | None = None) -> AuthFlow:
    return AuthFlow(
        MCP,
        version=version,
        redirect_uri="http://127.0.0.1:9/cb",
        client=ClientInfo("cid"),
        www_authenticate=challenge,
    )


def grant_flow(version: str, challenge: str | None = None) -> GrantFlow:
    grant = ClientCredentials("cid", client_secret="s")
    return GrantFlow(MCP, grant, version=version, www_authenticate=challenge, now=0.0)


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("challenge", [None, f'Bearer resource_metadata="{PRM_ROOT}"'])
def test_both_flows_make_the_same_gets(version: str, challenge: str | None) -> None:
    documents = world(version)
    code, code_error = outcome(code_flow(version, challenge), documents)
    grant, grant_error = outcome(grant_flow(version, challenge), documents)
    assert (code, code_error) == (grant, grant_error)
    assert (code_error is not None) == (version == "2025-06-18")
    if version == "2025-03-26":
        # no resource metadata; RFC 8414 at the MCP server's origin, then the defaults
        assert code == ["https://mcp.example.com/.well-known/oauth-authorization-server"]
    elif challenge is not None:
        assert code[0] == PRM_ROOT
    else:
        assert code[:2] == [PRM, PRM_ROOT]


def test_discovery_alone() -> None:
    profile = PROFILES["2025-11-25"]
    discovery = Discovery(
        MCP, profile, challenge=bearer_challenge(f'Bearer resource_metadata="{PRM}", scope="a b"')
    )
    documents = {
        PRM: (200, {"resource": MCP, "authorization_servers": [AS], "scopes_supported": ["a"]}),
        "https://as.example.com/.well-known/oauth-authorization-server/tenant": (200, as_doc()),
    }
    seen: list[tuple[str, str]] = []
    found: Discovered | None = None
    while found is None:
        request = discovery.request
        seen.append((discovery.phase, request.url))
        assert ("MCP-Protocol-Version", "2025-11-25") not in request.headers
        found = discovery.receive(*answer(documents, request))
    assert seen == [
        ("resource metadata", PRM),
        ("server metadata", "https://as.example.com/.well-known/oauth-authorization-server/tenant"),
    ]
    assert found.resource == MCP
    assert found.server.issuer == AS
    assert found.resource_metadata is not None
    assert found.resource_metadata.scopes_supported == ("a",)
    assert found.challenge_scope == "a b"
    assert found.scope(None) == "a b"


def test_the_resource_found_is_canonical() -> None:
    """RFC 8707 section 2 (MCP 2025-06-18 on): the resource sent is the canonical URI; a
    document naming the same server with an upper-case scheme and host is used,
    and the tokens are asked for the canonical form, by both flows."""
    documents = {
        PRM: (200, {"resource": "HTTPS://MCP.example.com/mcp", "authorization_servers": [AS]}),
        "https://as.example.com/.well-known/oauth-authorization-server/tenant": (200, as_doc()),
    }
    discovery = Discovery(MCP, PROFILES["2026-07-28"])
    found = None
    while found is None:
        found = discovery.receive(*answer(documents, discovery.request))
    assert found.resource == MCP
    flow = grant_flow("2026-07-28")
    metadata_gets(flow, documents)
    assert flow.found is not None
    assert flow.found.resource == MCP


@pytest.mark.parametrize("make", [code_flow, grant_flow])
def test_an_issuer_with_a_query_is_refused_by_both(make: Any) -> None:
    """RFC 8414 section 2: the issuer identifier "has no query or fragment components"."""
    documents = {
        PRM: (200, {"resource": MCP, "authorization_servers": ["https://as.example.com?t=1"]}),
    }
    flow = make("2025-11-25", f'Bearer resource_metadata="{PRM}"')
    with pytest.raises(ResourceMetadataError, match="has a query"):
        metadata_gets(flow, documents)
    assert flow.failed if isinstance(flow, GrantFlow) else flow.phase == "failed"


def test_pkce_is_checked_by_the_code_flow_only() -> None:
    """MCP 2025-11-25: "If ``code_challenge_methods_supported`` is absent ... MCP clients
    **MUST** refuse to proceed" is about the authorization code flow; the client
    credentials grant sends no authorization request, so it runs against the server."""
    documents = {
        PRM: (200, {"resource": MCP, "authorization_servers": [AS]}),
        "https://as.example.com/.well-known/oauth-authorization-server/tenant": (
            200,
            as_doc(code_challenge_methods_supported=["plain"]),
        ),
    }
    challenge = f'Bearer resource_metadata="{PRM}"'
    with pytest.raises(PkceUnsupportedError):
        metadata_gets(code_flow("2025-11-25", challenge), documents)
    grant = grant_flow("2025-11-25", challenge)
    metadata_gets(grant, documents)
    assert grant.found is not None
    step = grant.next_step()
    assert isinstance(step, HttpRequest)
    assert step.url == f"{AS}/token"


@pytest.mark.parametrize("make", [code_flow, grant_flow])
def test_2025_03_26_defaults_on_a_404_only(make: Any) -> None:
    """2025-03-26, Fallbacks for Servers without Metadata Discovery: the default endpoints
    serve a server "that do[es] not implement" the metadata (its 404); any other refusal
    ends discovery, in both flows."""
    url = "https://mcp.example.com/.well-known/oauth-authorization-server"
    flow = make("2025-03-26")
    metadata_gets(flow, {})
    step = flow.next_step()
    if isinstance(flow, AuthFlow):
        assert isinstance(step, OpenUrl)
        assert step.url.startswith("https://mcp.example.com/authorize?")
    else:
        assert isinstance(step, HttpRequest)
        assert step.url == "https://mcp.example.com/token"
    refused = make("2025-03-26")
    with pytest.raises(ServerMetadataError, match="4xx"):
        metadata_gets(refused, {url: (403, {"error": "forbidden"})})


def test_a_grant_ignores_a_malformed_challenge() -> None:
    """A grant needs no challenge: a ``WWW-Authenticate`` that does not parse leaves it to
    the well-known URIs (the code flow, which needs the challenge's scope, refuses it)."""
    flow = grant_flow("2025-11-25", 'Bearer resource_metadata="')
    documents = world("2025-11-25")
    assert metadata_gets(flow, documents)[:2] == [PRM, PRM_ROOT]
    assert not isinstance(flow.next_step(), Authorized)
