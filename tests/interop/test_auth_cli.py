"""The command line's authorization against real parts, oidc-provider as the authorization
server (``peers.py``): ``mcp-sansio call --http URL --interactive`` at the MCP server
protected with the Python SDK's helpers (``sdk_auth_server.py``), and ``call --client-id ID
--client-credentials`` at ``mcp-sansio serve --auth-issuer``.

The command registers itself (RFC 7591), prints the authorization URL on stderr and waits
for the redirect on its loopback listener; the test is the person's browser: it reads the
URL, signs in and consents on oidc-provider's forms, and opens the redirect on the
command's listener. ``BROWSER=true`` makes the command's :mod:`webbrowser` call a no-op.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
from pathlib import Path
from typing import IO

import pytest

from .authorization import Browser, get_json, oidc_provider, query, stderr_text
from .conftest import HERE, free_port, serve_on_port, stop_process

#: The bound of the command, in seconds (the SDK server imports slowly).
EXCHANGE = 150.0


def test_the_command_line_authorizes_at_an_sdk_protected_server(
    sdk_python: Path, oidc_provider_command: list[str], server_stderr: IO[bytes], tmp_path: Path
) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    with oidc_provider(oidc_provider_command, resources=[url], log=tmp_path / "oidc.log") as op:
        server = serve_on_port(
            [str(sdk_python), str(HERE / "sdk_auth_server.py"), str(port), op.issuer],
            port,
            server_stderr,
            timeout=EXCHANGE,
        )
        command = [
            sys.executable,
            "-m",
            "mcp_sansio",
            "call",
            "--http",
            url,
            "--interactive",
            "--versions",
            "2025-11-25",
            "--timeout",
            str(EXCHANGE),
            "tool",
            "whoami",
            "--args",
            "{}",
        ]
        cli = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**os.environ, "BROWSER": "true"},
        )
        lines: list[str] = []
        urls: queue.Queue[str | None] = queue.Queue()

        def read_stderr() -> None:
            assert cli.stderr is not None
            for raw in cli.stderr:
                line = raw.decode(errors="replace")
                lines.append(line)
                if line.startswith("  http://") and "/auth?" in line:
                    urls.put(line.strip())
            urls.put(None)

        reader = threading.Thread(target=read_stderr, daemon=True)
        reader.start()
        try:
            authorization_url = urls.get(timeout=EXCHANGE)
            assert authorization_url is not None, "".join(lines)
            redirect_uri = query(authorization_url)["redirect_uri"]
            assert redirect_uri.startswith("http://127.0.0.1:")
            browser = Browser()
            browser.authorize(authorization_url, redirect_uri, deliver=True)
            assert cli.wait(EXCHANGE) == 0, "".join(lines)
            assert cli.stdout is not None
            result = json.loads(cli.stdout.read())
        finally:
            if cli.poll() is None:
                stop_process(cli)
            reader.join(10)
            if cli.stdout is not None:
                cli.stdout.close()
            if cli.stderr is not None:
                cli.stderr.close()
            stop_process(server)
            print(f"--- the command's stderr ---\n{''.join(lines)[-20000:]}")

        (registration,) = [r for r in op.requests() if r["path"] == "/reg"]
        assert registration["status"] == 201
        (exchange,) = op.token_requests()
        assert exchange["grant_type"] == "authorization_code"
        assert query(authorization_url)["code_challenge_method"] == "S256"
        assert query(authorization_url)["resource"] == url
        (text,) = [c["text"] for c in result["content"]]
        seen = json.loads(text)
        assert seen["resource"] == url
        assert seen["scopes"] == ["mcp:read"]
        assert seen["subject"] == browser.login
        assert browser.pages == ["login", "consent"]
        assert query(authorization_url)["client_id"] == seen["client_id"]
    # the token the server verified (signature, iss, aud) is the one the call carried
    verified = [
        json.loads(line)["verified"]
        for line in stderr_text(server_stderr).splitlines()
        if line.startswith('{"verified"')
    ]
    assert verified
    assert {v["jti"] for v in verified} == {seen["jti"]}
    assert {v["aud"] for v in verified} == {url}
    assert {v["iss"] for v in verified} == {op.issuer}


#: The pre-registered service client's secret (oidc-provider wants 32 characters or more).
SERVICE_SECRET = "service-secret-for-the-interop-test-0123"


@pytest.mark.parametrize("method", ["client_secret_basic", "private_key_jwt"])
def test_the_command_line_gets_a_token_with_client_credentials(
    method: str, oidc_provider_command: list[str], server_stderr: IO[bytes], tmp_path: Path
) -> None:
    """``mcp-sansio call --client-id ID --client-credentials`` at ``mcp-sansio serve
    --auth-issuer``, both real processes, oidc-provider between them: no person, no
    browser; the token request names the resource and the challenge's scope, and the server
    verifies the JWT with the provider's keys. The secret comes from the environment (never
    printed); the key from a PEM file (an RFC 7523 assertion, no secret at all)."""
    from joserfc.jwk import ECKey

    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    client: dict[str, object] = {
        "client_id": "svc",
        "grant_types": ["client_credentials"],
        "redirect_uris": [],
        "response_types": [],
        "token_endpoint_auth_method": method,
    }
    extra: list[str] = []
    env = {**os.environ}
    if method == "client_secret_basic":
        client["client_secret"] = SERVICE_SECRET
        env["MCP_SANSIO_CLIENT_SECRET"] = SERVICE_SECRET
    else:
        key = ECKey.generate_key("P-256")
        client["jwks"] = {"keys": [{**key.as_dict(private=False), "kid": "svc-1"}]}
        client["token_endpoint_auth_signing_alg"] = "ES256"
        pem = tmp_path / "svc.pem"
        pem.write_bytes(key.as_pem(private=True))
        extra = ["--client-key", str(pem), "--client-key-alg", "ES256"]
    with oidc_provider(
        oidc_provider_command, resources=[url], clients=[client], log=tmp_path / "oidc.log"
    ) as op:
        jwks_uri = get_json(f"{op.issuer}/.well-known/openid-configuration")["jwks_uri"]
        server = serve_on_port(
            [
                *(sys.executable, "-m", "mcp_sansio", "serve", "--http", f"127.0.0.1:{port}"),
                *("--auth-issuer", op.issuer, "--auth-jwks-url", jwks_uri),
                *("--auth-scope", "mcp:read"),
            ],
            port,
            server_stderr,
        )
        command = [
            *(sys.executable, "-m", "mcp_sansio", "call", "--http", url),
            *("--client-id", "svc", "--client-credentials", *extra, "--timeout", "60"),
        ]
        try:
            done = subprocess.run(
                [*command, "tools/list"], capture_output=True, env=env, timeout=90
            )
            if method == "client_secret_basic":
                refused = subprocess.run(
                    [*command, "tools/list"],
                    capture_output=True,
                    env={**env, "MCP_SANSIO_CLIENT_SECRET": "not-" + SERVICE_SECRET},
                    timeout=90,
                )
        finally:
            stop_process(server)
        output = done.stdout + done.stderr
        assert done.returncode == 0, output.decode(errors="replace")
        names = [tool["name"] for tool in json.loads(done.stdout)["tools"]]
        assert names
        assert SERVICE_SECRET.encode() not in output
        requests = op.requests()
        assert not [r for r in requests if r["path"] == "/auth"]  # no person was asked
        (exchange, *others) = op.token_requests()
        assert exchange["status"] == 200
        assert exchange["grant_type"] == "client_credentials"
        assert exchange["resource"] == url
        assert exchange["scope"] == "mcp:read"
        if method == "client_secret_basic":
            assert exchange["authorization"] == "Basic"
            (wrong,) = others
            assert wrong["status"] == 401
            assert refused.returncode == 1
            said = refused.stderr.decode(errors="replace")
            assert "authorization failed: token request" in said, said
            assert "invalid_client" in said
            assert SERVICE_SECRET not in said
        else:
            assert "authorization" not in exchange
            assert others == []
