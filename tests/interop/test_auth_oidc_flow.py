"""Our sans-IO authorization code flow (:class:`~mcp_sansio.auth.AuthFlow`) against a real,
certified authorization server: oidc-provider (``peers.py``, run by ``oidc_provider.mjs``).

The flow's HTTP requests are made with the standard library (``authorization.fetch``); a
person's browser (``authorization.Browser``) signs in and consents on oidc-provider's own
forms. The protected resource metadata comes from a tiny loopback server. One test per
protocol version walks: the 401's ``resource_metadata``, the server metadata (RFC 8414's
well-known URI, the first the flow tries), Dynamic Client Registration, the authorization
request with PKCE S256 and the resource indicator, the redirect (``state`` and RFC 9207
``iss``), the token exchange, a refresh (rotated), and a step-up to a wider scope on
``insufficient_scope``. Each access token is a JWT checked against the server's keys: its
audience is our resource, its scope what was granted.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from mcp_sansio.auth._errors import ClientBindingError, ServerMetadataError
from mcp_sansio.auth._flow import AuthFlow
from mcp_sansio.auth._oauth import refresh_grant, token_request
from mcp_sansio.auth._store import AuthMethod, ClientInfo, MemoryTokenStore

from .authorization import (
    Browser,
    ResourceMetadataServer,
    access_token_claims,
    fetch,
    oidc_provider,
    query,
    run_flow,
)

#: The client's redirect URI: loopback, where nothing listens (the browser stops there).
REDIRECT_URI = "http://127.0.0.1:9/callback"


@pytest.mark.parametrize("version", ["2025-11-25", "2026-07-28"])
def test_code_flow_refresh_and_step_up(
    version: str, oidc_provider_command: list[str], tmp_path: Path
) -> None:
    with (
        ResourceMetadataServer() as prm,
        oidc_provider(
            oidc_provider_command, resources=[prm.resource], log=tmp_path / "oidc.log"
        ) as op,
    ):
        prm.document = {
            "resource": prm.resource,
            "authorization_servers": [op.issuer],
            "scopes_supported": ["mcp:read", "mcp:write"],
        }
        store = MemoryTokenStore()
        browser = Browser()

        # -- the first authorization: 401 with resource_metadata and scope="mcp:read"
        flow = AuthFlow(
            prm.resource,
            version=version,
            redirect_uri=REDIRECT_URI,
            www_authenticate=f'Bearer resource_metadata="{prm.metadata_url}", scope="mcp:read"',
            store=store,
            client_name="mcp-sansio interop",
        )
        first = run_flow(flow, browser, REDIRECT_URI)
        assert prm.paths == ["/.well-known/oauth-protected-resource/mcp"]
        asked = op.requests()
        # RFC 8414's well-known URI first; oidc-provider serves it, so no OpenID fallback
        assert asked[0]["path"] == "/.well-known/oauth-authorization-server"
        assert asked[0]["status"] == 200
        assert not any(r["path"] == "/.well-known/openid-configuration" for r in asked)
        assert flow.server_metadata is not None
        assert flow.server_metadata.issuer == op.issuer
        assert flow.client_source == "registered"
        assert flow.client is not None
        client_id = flow.client.client_id
        (registration,) = [r for r in asked if r["method"] == "POST" and r["path"] == "/reg"]
        assert registration["status"] == 201

        (authorization,) = [r for r in asked if r["path"] == "/auth" and "client_id" in r]
        assert authorization["resource"] == prm.resource
        scope_asked = {"2025-11-25": "mcp:read", "2026-07-28": "mcp:read offline_access"}
        assert authorization["scope"] == scope_asked[version]
        # oidc-provider drops offline_access from a request without prompt=consent (OpenID
        # Connect Core 1.0 section 11: "the prompt parameter MUST be used with value consent");
        # oidc_provider.mjs issues the refresh token for the refresh_token grant type anyway
        assert authorization.get("scope_kept", authorization["scope"]) == "mcp:read"
        assert browser.pages == ["login", "consent"]
        (redirect,) = browser.redirects
        answer = query(redirect)
        assert answer["iss"] == op.issuer  # RFC 9207, checked by the flow too
        assert set(answer) == {"code", "state", "iss"}

        (code_exchange,) = op.token_requests()
        assert code_exchange["grant_type"] == "authorization_code"
        assert code_exchange["resource"] == prm.resource
        assert code_exchange["status"] == 200
        tokens = first.tokens
        assert tokens.token_type == "Bearer"
        assert tokens.refresh_token is not None
        claims = access_token_claims(tokens.access_token, op)
        assert claims["aud"] == prm.resource
        assert claims["client_id"] == client_id
        assert claims["sub"] == browser.login
        assert claims["scope"].split() == ["mcp:read"]
        assert tokens.scope == "mcp:read"
        assert store.load(first.key) == tokens

        # -- the token expired: a 401 invalid_token is answered by a refresh, no person
        flow = AuthFlow(
            prm.resource,
            version=version,
            redirect_uri=REDIRECT_URI,
            www_authenticate=(
                f'Bearer error="invalid_token", resource_metadata="{prm.metadata_url}"'
            ),
            store=store,
        )
        second = run_flow(flow, browser, REDIRECT_URI)
        assert flow.client_source == "stored"
        assert flow.client is not None
        assert flow.client.client_id == client_id
        assert len(browser.redirects) == 1  # nobody was asked
        refresh = op.token_requests()[-1]
        assert refresh["grant_type"] == "refresh_token"
        assert refresh["resource"] == prm.resource
        assert refresh["status"] == 200
        refreshed = second.tokens
        assert refreshed.access_token != tokens.access_token
        # rotated (RFC 9700 section 4.14.2; oidc_provider.mjs rotates each use) ...
        assert refreshed.refresh_token is not None
        assert refreshed.refresh_token != tokens.refresh_token
        claims = access_token_claims(refreshed.access_token, op)
        assert claims["aud"] == prm.resource
        assert claims["scope"].split() == ["mcp:read"]
        # ... so the old refresh token is refused now (RFC 6749 section 5.2: invalid_grant)
        assert flow.server_metadata is not None
        stale = token_request(
            flow.server_metadata.token_endpoint,
            refresh_grant(tokens.refresh_token),
            client=flow.client,
            method=flow.client.method_for(
                flow.server_metadata.token_endpoint_auth_methods_supported
            ),
            resource=prm.resource,
        )
        status, _, body = fetch(stale)
        assert status == 400, body
        assert b"invalid_grant" in body, body

        # -- a 403 insufficient_scope: a step-up through the person (never a refresh)
        challenge_scope = {"2025-11-25": "mcp:read mcp:write", "2026-07-28": "mcp:write"}[version]
        flow = AuthFlow(
            prm.resource,
            version=version,
            redirect_uri=REDIRECT_URI,
            www_authenticate=(
                f'Bearer error="insufficient_scope", scope="{challenge_scope}", '
                f'resource_metadata="{prm.metadata_url}"'
            ),
            store=store,
        )
        third = run_flow(flow, browser, REDIRECT_URI)
        # 2026-07-28 asks for the scope asked before and the new one (the union)
        assert flow.scope is not None
        assert {"mcp:read", "mcp:write"} <= set(flow.scope.split())
        assert len(browser.redirects) == 2
        # the person is signed in already (the session cookie): only the consent to the new scope
        assert browser.pages == ["login", "consent", "consent"]
        step_up = op.token_requests()[-1]
        assert step_up["grant_type"] == "authorization_code"
        wider = third.tokens
        claims = access_token_claims(wider.access_token, op)
        assert claims["aud"] == prm.resource
        assert sorted(claims["scope"].split()) == ["mcp:read", "mcp:write"]
        assert wider.access_token not in (tokens.access_token, refreshed.access_token)
        assert store.load(third.key) == wider


@pytest.mark.parametrize("version", ["2025-06-18", "2025-11-25", "2026-07-28"])
def test_discovery_of_an_issuer_with_a_path(
    version: str, oidc_provider_command: list[str], tmp_path: Path
) -> None:
    """oidc-provider mounted at ``/oidc`` (issuer ``http://127.0.0.1:PORT/oidc``) serves its
    metadata at ``/oidc/.well-known/openid-configuration`` (and
    ``/oidc/.well-known/oauth-authorization-server``), not at RFC 8414's path-inserted URI.
    2025-11-25 and later try, in the order the text gives, the OAuth path-inserted URI, the
    OpenID Connect path-inserted URI, then OpenID Connect Discovery's path-appended one,
    which answers: the flow goes on to tokens. 2025-06-18 names RFC 8414 only: its one
    candidate is 404, and the flow stops there."""
    with (
        ResourceMetadataServer() as prm,
        oidc_provider(
            oidc_provider_command,
            resources=[prm.resource],
            log=tmp_path / "oidc.log",
            mount="/oidc",
        ) as op,
    ):
        assert op.issuer.endswith("/oidc")
        prm.document = {"resource": prm.resource, "authorization_servers": [op.issuer]}
        flow = AuthFlow(
            prm.resource,
            version=version,
            redirect_uri=REDIRECT_URI,
            www_authenticate=f'Bearer resource_metadata="{prm.metadata_url}", scope="mcp:read"',
        )
        browser = Browser()
        if version == "2025-06-18":
            with pytest.raises(ServerMetadataError, match="no authorization server metadata"):
                run_flow(flow, browser, REDIRECT_URI)
            tried = [(r["path"], r["status"]) for r in op.requests()]
            assert tried == [("/.well-known/oauth-authorization-server/oidc", 404)]
            return
        done = run_flow(flow, browser, REDIRECT_URI)
        tried = [(r["path"], r["status"]) for r in op.requests()][:3]
        assert tried == [
            ("/.well-known/oauth-authorization-server/oidc", 404),
            ("/.well-known/openid-configuration/oidc", 404),
            ("/oidc/.well-known/openid-configuration", 200),
        ]
        assert flow.server_metadata is not None
        assert flow.server_metadata.token_endpoint == f"{op.issuer}/token"
        assert query(browser.redirects[0])["iss"] == op.issuer
        claims = access_token_claims(done.tokens.access_token, op)
        assert claims["aud"] == prm.resource
        assert claims["scope"] == "mcp:read"


@pytest.mark.parametrize("method", ["client_secret_basic", "client_secret_post"])
def test_a_pre_registered_confidential_client(
    method: AuthMethod, oidc_provider_command: list[str], tmp_path: Path
) -> None:
    """A client registered beforehand with a secret (MCP 2026-07-28: credentials keyed by
    the ``issuer``): no registration request; the token requests authenticate as it was
    registered (RFC 6749 section 2.3.1: HTTP Basic, or the secret in the form), and
    oidc-provider takes them. The same credentials bound to another issuer are refused by
    the flow before any token request (Authorization Server Binding)."""
    secret = "interop-secret-" + method
    with ResourceMetadataServer() as prm:
        registered = {
            "client_id": "interop-confidential",
            "client_secret": secret,
            "redirect_uris": [REDIRECT_URI],
            "application_type": "native",
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method": method,
        }
        with oidc_provider(
            oidc_provider_command,
            resources=[prm.resource],
            log=tmp_path / "oidc.log",
            clients=[registered],
        ) as op:
            prm.document = {"resource": prm.resource, "authorization_servers": [op.issuer]}
            challenge = f'Bearer resource_metadata="{prm.metadata_url}", scope="mcp:read"'
            client = ClientInfo("interop-confidential", secret, method, issuer=op.issuer)
            flow = AuthFlow(
                prm.resource,
                version="2026-07-28",
                redirect_uri=REDIRECT_URI,
                www_authenticate=challenge,
                client={op.issuer: client},
            )
            done = run_flow(flow, Browser(), REDIRECT_URI)
            assert flow.client_source == "pre-registered"
            assert not any(r["path"] == "/reg" for r in op.requests())
            (exchange,) = op.token_requests()
            assert exchange["status"] == 200
            if method == "client_secret_basic":
                assert exchange.get("authorization") == "Basic"
                assert "client_id" not in exchange
            else:
                assert "authorization" not in exchange
                assert exchange["client_id"] == "interop-confidential"
            claims = access_token_claims(done.tokens.access_token, op)
            assert claims["client_id"] == "interop-confidential"
            assert claims["aud"] == prm.resource

            elsewhere = ClientInfo("interop-confidential", secret, issuer="http://127.0.0.1:9")
            flow = AuthFlow(
                prm.resource,
                version="2026-07-28",
                redirect_uri=REDIRECT_URI,
                www_authenticate=challenge,
                client=elsewhere,
            )
            with pytest.raises(ClientBindingError, match="MUST NOT be reused"):
                run_flow(flow, Browser(), REDIRECT_URI)
            assert len(op.token_requests()) == 1
