"""The whole chain of our parts with a real authorization server: our asyncio client
(``OAuthClient``, its person's step through the loopback redirect listener), our protected
asyncio HTTP server (``serve_http(auth=ServerAuth(ProtectedResource, JwtVerifier))``, the
verifier holding oidc-provider's keys), and oidc-provider (``peers.py``).

The server answers 401 with its resource metadata; the client discovers, registers,
authorizes with PKCE through the browser, and calls a tool whose handler sees the
principal of oidc-provider's token. Then the server is restarted refusing every token
issued before the restart (as after a revocation): the same client's token gets 401
``invalid_token``, and the client refreshes it, without the person. Then it is restarted
requiring ``mcp:write`` too: the token gets 403 ``insufficient_scope``, and the client's
step-up brings a token with both scopes.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from mcp_sansio.auth import (
    Decided,
    InvalidToken,
    JwtVerifier,
    OAuthClient,
    Principal,
    ProtectedResource,
    ServerAuth,
    TokenVerifier,
    Verification,
)
from mcp_sansio.server import Server

from .authorization import Browser, access_token_claims, deliver_in_thread, get_json, oidc_provider
from .conftest import free_port
from .styles import texts

LIMIT = 60.0


def _server() -> Server:
    server = Server("chain", "1.0")

    @server.tool("whoami", input_schema={"type": "object"})
    def whoami(ctx: Any, arguments: Mapping[str, Any]) -> str:
        p = ctx.principal
        if p is None:
            return "null"
        return json.dumps(
            {"subject": p.subject, "client_id": p.client_id, "scopes": sorted(p.scopes)}
        )

    return server


class IssuedSince:
    """A verifier refusing the tokens ``inner`` accepts that were issued (``iat``) before
    ``since``, as a server does after revoking them."""

    def __init__(self, inner: TokenVerifier, since: float) -> None:
        self.inner = inner
        self.since = since

    def verify(self, token: str, *, resource: str, now: float) -> Verification:
        verification = self.inner.verify(token, resource=resource, now=now)
        verdict = verification.next_step()
        if isinstance(verdict, Principal) and float(verdict.claims["iat"]) < self.since:
            return Decided(InvalidToken("issued before the restart"))
        return verification


@contextmanager
def protected(port: int, auth: ServerAuth) -> Iterator[None]:
    """Our asyncio server with ``auth`` on 127.0.0.1:``port``, in a thread of its own."""
    from mcp_sansio.asyncio import serve_http

    started, stop = threading.Event(), threading.Event()

    def run() -> None:
        async def main() -> None:
            listener = await serve_http(_server(), port=port, auth=auth, keepalive=None)
            started.set()
            while not stop.is_set():
                await asyncio.sleep(0.02)
            listener.close()
            await listener.wait_closed()

        asyncio.run(main())

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    assert started.wait(LIMIT)
    try:
        yield
    finally:
        stop.set()
        thread.join(LIMIT)
        assert not thread.is_alive()


def test_our_client_our_server_and_oidc_provider(
    oidc_provider_command: list[str], tmp_path: Path
) -> None:
    from mcp_sansio.asyncio import Client
    from mcp_sansio.blocking._redirect import LoopbackRedirect

    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    with (
        oidc_provider(oidc_provider_command, resources=[url], log=tmp_path / "oidc.log") as op,
        LoopbackRedirect(timeout=LIMIT) as redirect,
    ):
        meta = get_json(f"{op.issuer}/.well-known/oauth-authorization-server")
        jwks = get_json(meta["jwks_uri"])
        browser = Browser()
        redirect.announce = deliver_in_thread(browser, redirect.redirect_uri)
        auth = OAuthClient(url, version="2025-11-25", redirect_uri=redirect.redirect_uri)

        def guarded(required: tuple[str, ...], since: float | None = None) -> ServerAuth:
            resource = ProtectedResource(
                url,
                (op.issuer,),
                scopes_supported=("mcp:read", "mcp:write"),
                required_scopes=required,
            )
            verifier: TokenVerifier = JwtVerifier(issuer=op.issuer, jwks=jwks)
            if since is not None:
                verifier = IssuedSince(verifier, since)
            return ServerAuth(resource, verifier)

        async def whoami() -> Any:
            client = Client.connect_http(
                url, auth=auth, open_url=redirect, versions=["2025-11-25"], timeout=LIMIT
            )
            async with client:
                return json.loads(texts(await client.call_tool("whoami", {}))[0])

        with protected(port, guarded(("mcp:read",))):
            first = asyncio.run(whoami())
        held = auth.authorization
        assert held is not None
        claims = access_token_claims(held.tokens.access_token, op)
        since = float(claims["iat"]) + 1  # (iat is in whole seconds)
        while time.time() < since:
            time.sleep(0.05)
        with protected(port, guarded(("mcp:read",), since)):
            refreshed = asyncio.run(whoami())
        renewed = auth.authorization
        assert renewed is not None
        renewed_claims = access_token_claims(renewed.tokens.access_token, op)
        pages_after_refresh = list(browser.pages)
        with protected(port, guarded(("mcp:read", "mcp:write"))):
            second = asyncio.run(whoami())
        wider = auth.authorization
        assert wider is not None
        wider_claims = access_token_claims(wider.tokens.access_token, op)

    # the principal the handler saw is oidc-provider's token's
    assert claims["aud"] == url
    assert first == {
        "subject": browser.login,
        "client_id": claims["client_id"],
        "scopes": claims["scope"].split(),
    }
    assert first["scopes"] == ["mcp:read"]
    # the refresh: a new access token, issued after the restart, no person involved
    assert renewed_claims["jti"] != claims["jti"]
    assert float(renewed_claims["iat"]) >= since
    assert pages_after_refresh == ["login", "consent"]
    assert refreshed == first
    # the step-up: a second authorization (consent only), both scopes in the new token
    assert browser.pages == ["login", "consent", "consent"]
    assert len(browser.redirects) == 2
    assert sorted(wider_claims["scope"].split()) == ["mcp:read", "mcp:write"]
    assert second["scopes"] == ["mcp:read", "mcp:write"]
    assert second["client_id"] == first["client_id"]
    grants = [r["grant_type"] for r in op.token_requests() if r["status"] == 200]
    assert grants == ["authorization_code", "refresh_token", "authorization_code"]


def test_the_sdk_oauth_client_at_our_protected_server(
    sdk_python: Path, oidc_provider_command: list[str], tmp_path: Path
) -> None:
    """The Python SDK's ``OAuthClientProvider`` (``sdk_auth_client.py``) at our protected
    server, oidc-provider as the authorization server: our 401 and resource metadata lead
    it through discovery, registration and the code flow, and our handler sees the
    principal of its token."""
    from .test_auth_sdk import run_sdk_client

    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    with oidc_provider(oidc_provider_command, resources=[url], log=tmp_path / "oidc.log") as op:
        meta = get_json(f"{op.issuer}/.well-known/oauth-authorization-server")
        resource = ProtectedResource(
            url, (op.issuer,), scopes_supported=("mcp:read",), required_scopes=("mcp:read",)
        )
        auth = ServerAuth(resource, JwtVerifier(issuer=op.issuer, jwks=get_json(meta["jwks_uri"])))
        with protected(port, auth):
            out = run_sdk_client(sdk_python, url, [("whoami", {})])
        claims = access_token_claims(out["tokens"][0], op)
        (registration,) = [r for r in op.requests() if r["path"] == "/reg"]

    assert registration["status"] == 201
    assert "fatal" not in out, out
    assert claims["aud"] == url
    seen = json.loads(out["calls"][0][0])
    assert seen == {
        "subject": "interop-user",
        "client_id": claims["client_id"],
        "scopes": ["mcp:read"],
    }
    assert out["authorizations"] == 1
