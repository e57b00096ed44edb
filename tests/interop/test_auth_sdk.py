"""Authorization across implementations, with oidc-provider (``peers.py``) as the
authorization server and the official Python SDK (``mcp==2.3.0``, its own venv):

- our clients (``connect_http(auth=OAuthClient(...), open_url=...)``) against an MCP
  server protected with the SDK's own helpers (``sdk_auth_server.py``: ``AuthSettings`` and
  a ``TokenVerifier`` checking oidc-provider's JWTs): the SDK's 401 and resource metadata,
  discovery, registration, code + PKCE through the person's browser, the call with the
  token the SDK's auth context then holds; a token the server stops taking is refreshed
  without the person; a call that needs more scope gets a 403 ``insufficient_scope`` and is
  answered by a step-up through the person, then sent again;
- the SDK's own OAuth client (``sdk_auth_client.py``: ``OAuthClientProvider`` on httpx2)
  at the same server, for reference.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path
from typing import IO, Any

import pytest

from mcp_sansio.auth._oauth_client import OAuthClient

from .authorization import (
    Browser,
    access_token_claims,
    deliver_in_thread,
    oidc_provider,
    stderr_text,
)
from .conftest import HERE, free_port, serve_on_port, stop_process
from .styles import ALL_STYLES, Runtime, adapter, texts

#: The bound of one exchange, in seconds (the SDK imports slowly).
EXCHANGE = 150.0
REDIRECT_URI = "http://127.0.0.1:9/callback"


def _log(stream: IO[bytes]) -> list[dict[str, Any]]:
    out = []
    for line in stderr_text(stream).splitlines():
        if line.startswith(('{"verified"', '{"refused"', '{"step_up"')):
            out.append(json.loads(line))
    return out


@pytest.mark.parametrize("style", ALL_STYLES)
def test_our_client_against_an_sdk_protected_server(
    style: str,
    sdk_python: Path,
    oidc_provider_command: list[str],
    server_stderr: IO[bytes],
    tmp_path: Path,
) -> None:
    """Each runtime's client, its person's step through the loopback redirect listener
    (``mcp_sansio.blocking._redirect.LoopbackRedirect``, as the command line uses it)."""
    from mcp_sansio.blocking._redirect import LoopbackRedirect

    Client = adapter(style).Client
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    with (
        oidc_provider(oidc_provider_command, resources=[url], log=tmp_path / "oidc.log") as op,
        LoopbackRedirect(timeout=EXCHANGE) as redirect,
    ):
        browser = Browser()
        redirect.announce = deliver_in_thread(browser, redirect.redirect_uri)
        server = serve_on_port(
            [str(sdk_python), str(HERE / "sdk_auth_server.py"), str(port), op.issuer],
            port,
            server_stderr,
            timeout=EXCHANGE,
        )
        try:
            auth = OAuthClient(
                url,
                version="2025-11-25",
                redirect_uri=redirect.redirect_uri,
                client_name="mcp-sansio",
            )
            options: dict[str, Any] = {
                "auth": auth,
                "open_url": redirect,
                "versions": ["2025-11-25"],
                "timeout": EXCHANGE,
            }
            if style == "blocking":
                with Client.connect_http(url, **options) as client:
                    first = json.loads(texts(client.call_tool("whoami", {}))[0])
                    held = auth.authorization
                    assert texts(client.call_tool("revoke_me", {})) == ["revoked"]
                    # the next request's token is refused: 401, a refresh, the call again
                    second = json.loads(texts(client.call_tool("whoami", {}))[0])
            else:

                async def exchange() -> tuple[Any, Any, Any]:
                    async with Client.connect_http(url, **options) as client:
                        first = json.loads(texts(await client.call_tool("whoami", {}))[0])
                        held = auth.authorization
                        assert texts(await client.call_tool("revoke_me", {})) == ["revoked"]
                        second = json.loads(texts(await client.call_tool("whoami", {}))[0])
                        return first, held, second

                first, held, second = Runtime(style).run(exchange, EXCHANGE)
            refreshed = auth.authorization
        finally:
            stop_process(server)

        # the person signed in and consented once; the refresh needed nobody
        assert browser.pages == ["login", "consent"]
        assert len(browser.redirects) == 1
        assert held is not None
        assert refreshed is not None
        claims = access_token_claims(held.tokens.access_token, op)
        assert claims["aud"] == url
        assert claims["scope"] == "mcp:read"
        # what the SDK's auth context held for the call: our token, for its resource
        assert first == {
            "client_id": claims["client_id"],
            "scopes": ["mcp:read"],
            "resource": url,
            "subject": browser.login,
            "jti": claims["jti"],
        }
        new_claims = access_token_claims(refreshed.tokens.access_token, op)
        assert new_claims["jti"] != claims["jti"]
        assert second["jti"] == new_claims["jti"]
        assert second["client_id"] == claims["client_id"]
        grants = [r["grant_type"] for r in op.token_requests() if r["status"] == 200]
        assert grants == ["authorization_code", "refresh_token"]
        log = _log(server_stderr)
        verified = [entry["verified"]["jti"] for entry in log if "verified" in entry]
        # each request carried the token: the first, until refused, then the refreshed one
        assert verified[0] == claims["jti"]
        assert verified[-1] == new_claims["jti"]
        assert {"refused": "revoked"} in log


def test_our_client_steps_up_at_an_sdk_protected_server(
    sdk_python: Path, oidc_provider_command: list[str], server_stderr: IO[bytes], tmp_path: Path
) -> None:
    """A call that needs ``mcp:write`` gets the server's 403 ``insufficient_scope`` (with
    ``scope="mcp:read mcp:write"``): our client asks the person for the wider scope (a
    consent only: the session is there), then sends the same call again, which succeeds."""
    from mcp_sansio.asyncio import Client

    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    with oidc_provider(oidc_provider_command, resources=[url], log=tmp_path / "oidc.log") as op:
        server = serve_on_port(
            [str(sdk_python), str(HERE / "sdk_auth_server.py"), str(port), op.issuer],
            port,
            server_stderr,
            timeout=EXCHANGE,
        )
        try:
            auth = OAuthClient(url, version="2025-11-25", redirect_uri=REDIRECT_URI)
            browser = Browser()

            def open_url(authorization_url: str) -> str:
                return browser.authorize(authorization_url, REDIRECT_URI)

            async def exchange() -> tuple[Any, Any, Any]:
                client = Client.connect_http(
                    url, auth=auth, open_url=open_url, versions=["2025-11-25"], timeout=EXCHANGE
                )
                async with client:
                    before = json.loads(texts(await client.call_tool("whoami", {}))[0])
                    wrote = texts(await client.call_tool("write_note", {"text": "hello"}))
                    after = json.loads(texts(await client.call_tool("whoami", {}))[0])
                    return before, wrote, after

            before, wrote, after = asyncio.run(exchange())
        finally:
            stop_process(server)

    assert before["scopes"] == ["mcp:read"]
    assert wrote == ["written: hello"]
    assert sorted(after["scopes"]) == ["mcp:read", "mcp:write"]
    assert after["client_id"] == before["client_id"]  # the same registration
    assert browser.pages == ["login", "consent", "consent"]
    asked = [r["scope"] for r in op.requests() if r["path"] == "/auth" and "scope" in r]
    assert asked == ["mcp:read", "mcp:read mcp:write"]
    grants = [r["grant_type"] for r in op.token_requests() if r["status"] == 200]
    assert grants == ["authorization_code", "authorization_code"]  # never a refresh
    assert {"step_up": ["mcp:read"]} in _log(server_stderr)


def run_sdk_client(sdk_python: Path, url: str, calls: list[tuple[str, dict[str, Any]]]) -> Any:
    """``sdk_auth_client.py`` (the SDK's ``OAuthClientProvider``) against ``url``: its JSON
    report."""
    script = [str(sdk_python), str(HERE / "sdk_auth_client.py"), url, "legacy", json.dumps(calls)]
    try:
        done = subprocess.run(
            script, capture_output=True, text=True, timeout=EXCHANGE, stdin=subprocess.DEVNULL
        )
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"the SDK client ran for more than {EXCHANGE:g} s:\n{exc.stderr!r}")
    print(f"--- the SDK client's stderr ---\n{done.stderr[-20000:]}")
    assert done.returncode == 0, done.stderr[-5000:]
    return json.loads(done.stdout)


def test_the_sdk_oauth_client_at_an_sdk_protected_server(
    sdk_python: Path, oidc_provider_command: list[str], server_stderr: IO[bytes], tmp_path: Path
) -> None:
    """The reference: the SDK's own OAuth client (``OAuthClientProvider``) with oidc-provider
    and the SDK-protected server. Its first authorization works (its token reaches the
    server). A token the server stops taking (401) is answered by a new authorization
    through the browser, not a refresh (its token has not expired by its clock). Its
    step-up does not work at this authorization server: the SDK registers with ``scope`` =
    the scope of its first authorization (``mcp:read offline_access``), and
    oidc-provider holds a client to its registered scope, so the wider request is refused
    with ``invalid_scope`` ("requested scope is not allowed", RFC 6749 section 4.1.2.1) and
    the SDK's session ends. (Our client registers without ``scope``: its step-up above
    works.)"""
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    with oidc_provider(oidc_provider_command, resources=[url], log=tmp_path / "oidc.log") as op:
        server = serve_on_port(
            [str(sdk_python), str(HERE / "sdk_auth_server.py"), str(port), op.issuer],
            port,
            server_stderr,
            timeout=EXCHANGE,
        )
        try:
            out = run_sdk_client(
                sdk_python,
                url,
                [
                    ("whoami", {}),
                    ("revoke_me", {}),
                    ("whoami", {}),
                    ("write_note", {"text": "from the SDK"}),
                ],
            )
        finally:
            stop_process(server)
        (registration,) = [r for r in op.requests() if r["path"] == "/reg"]
        claims = access_token_claims(out["tokens"][0], op)
        grants = [r["grant_type"] for r in op.token_requests() if r["status"] == 200]

    first = json.loads(out["calls"][0][0])
    assert first["jti"] == claims["jti"]
    assert first["resource"] == url
    assert first["scopes"] == ["mcp:read"]
    assert claims["aud"] == url
    assert registration["scope"] == "mcp:read offline_access"
    # the refused token: the SDK authorizes anew through the browser, not by a refresh
    assert out["calls"][1] == ["revoked"]
    again = json.loads(out["calls"][2][0])
    assert again["jti"] != first["jti"]
    assert grants == ["authorization_code", "authorization_code"]
    assert out["scopes"] == [
        "mcp:read offline_access",
        "mcp:read offline_access",
        "mcp:read offline_access mcp:write",
    ]
    (error,) = out["errors"]
    assert error["error"] == "invalid_scope"
    assert error["iss"] == op.issuer
    assert "fatal" in out
    assert {"step_up": ["mcp:read"]} in _log(server_stderr)
