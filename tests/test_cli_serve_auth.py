"""``mcp-sansio serve --http HOST:PORT --auth-issuer ...``: the example server as a protected
resource, run as a real process: the metadata names the issuer, 401 without a token, 403
without the scope, 200 with a token verified against the JWKS the server fetches; and the
usage errors, each exit 2 before anything listens."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import orjson
import pytest

pytest.importorskip("joserfc")
pytest.importorskip("h11")
from test_http_server_auth import INIT, ISSUER, bearer, challenge, mint, request
from test_http_server_auth_runtimes import Target, free_port, jwks_server

from mcp_sansio._cli import main
from mcp_sansio._cli_serve_auth import INTROSPECTION_SECRET_VARIABLE

LIMIT = 20.0


@contextmanager
def serving(*extra: str) -> Iterator[tuple[Any, str]]:
    """The command, on a free port, until it listens; stopped (SIGTERM) at the end."""
    port = free_port()
    argv = [sys.executable, "-m", "mcp_sansio", "serve", "--http", f"127.0.0.1:{port}", *extra]
    process = subprocess.Popen(argv, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + LIMIT
        while True:
            assert process.poll() is None, process.communicate()[1]
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert time.monotonic() < deadline, "the server did not listen"
                time.sleep(0.05)
        yield Target(port), f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        _, err = process.communicate(timeout=LIMIT)
        assert b"Traceback" not in err, err.decode(errors="replace")


def test_serve_requires_tokens_verified_with_the_jwks() -> None:
    with jwks_server() as (url, hits):
        with serving(
            "--auth-issuer", ISSUER, "--auth-jwks-url", url, "--auth-scope", "mcp:tools"
        ) as (target, resource):
            status, _, body = request(target, "GET", "/.well-known/oauth-protected-resource/mcp")
            assert status == 200
            doc = orjson.loads(body)
            assert doc["resource"] == resource
            assert doc["authorization_servers"] == [ISSUER]
            assert doc["scopes_supported"] == ["mcp:tools"]
            status, headers, _ = request(target, "POST", "/mcp", INIT)
            assert status == 401
            assert challenge(headers)["scope"] == "mcp:tools"
            status, headers, _ = request(
                target, "POST", "/mcp", INIT, bearer(mint(resource, scope="x"))
            )
            assert status == 403
            assert challenge(headers)["error"] == "insufficient_scope"
            status, headers, _ = request(
                target, "POST", "/mcp", INIT, bearer(mint("http://127.0.0.1:1/mcp"))
            )
            assert status == 401
            assert challenge(headers)["error"] == "invalid_token"
            status, headers, _ = request(target, "POST", "/mcp", INIT, bearer(mint(resource)))
            assert status == 200
            assert headers["mcp-session-id"]
        assert hits


def test_serve_takes_dpop_bound_tokens_with_auth_dpop() -> None:
    from mcp_sansio.auth import DPoPKey

    key = DPoPKey.generate()
    with (
        jwks_server() as (url, _),
        serving("--auth-issuer", ISSUER, "--auth-jwks-url", url, "--auth-dpop", "required") as (
            target,
            resource,
        ),
    ):
        doc = orjson.loads(request(target, "GET", "/.well-known/oauth-protected-resource/mcp")[2])
        assert doc["dpop_bound_access_tokens_required"] is True
        token = mint(resource, cnf={"jkt": key.thumbprint})
        status, headers, _ = request(target, "POST", "/mcp", INIT, bearer(token))
        assert status == 401  # Bearer is not taken
        assert headers["www-authenticate"].startswith("DPoP ")
        proof = key.proof("POST", resource, now=time.time(), access_token=token)
        status, _, body = request(
            target, "POST", "/mcp", INIT, {"authorization": f"DPoP {token}", "dpop": proof}
        )
        assert status == 200, body


HTTP = ["--http", "127.0.0.1:8765"]
ISSUED = ["--auth-issuer", ISSUER]
JWKS_URL = ["--auth-jwks-url", "http://127.0.0.1:9/jwks"]
INTROSPECT = ["--auth-introspection", "https://as.example.com/introspect"]


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (JWKS_URL, "goes with --auth-issuer"),
        (ISSUED, "is for an HTTP server"),
        (["--http", "127.0.0.1:0", *ISSUED, *JWKS_URL], "needs a port"),
        ([*HTTP, *ISSUED], "needs --auth-jwks-url or"),
        ([*HTTP, *ISSUED, "--auth-jwks-url", "http://keys.example.com/jwks"], "https"),
        ([*HTTP, "--auth-issuer", "http://as.example.com", *JWKS_URL], "https"),
        ([*HTTP, *ISSUED, *INTROSPECT], INTROSPECTION_SECRET_VARIABLE),
        ([*HTTP, *ISSUED, *JWKS_URL, "--auth-client-id", "rs"], "goes with --auth-introspection"),
        ([*HTTP, *ISSUED, *JWKS_URL, *INTROSPECT], "not allowed with"),
        (["--auth-dpop", "required"], "goes with --auth-issuer"),
        ([*HTTP, *ISSUED, *JWKS_URL, "--auth-dpop", "maybe"], "invalid choice"),
    ],
)
def test_serve_auth_usage_errors(
    argv: list[str], says: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(INTROSPECTION_SECRET_VARIABLE, raising=False)
    assert main(["serve", *argv]) == 2
    assert says in capsys.readouterr().err


def test_serve_with_introspection_builds_its_verifier(monkeypatch: pytest.MonkeyPatch) -> None:
    """With the secret in the environment (never on the command line), the introspection
    verifier is made with client_secret_basic credentials."""
    from mcp_sansio._cli import build_parser
    from mcp_sansio._cli_serve_auth import serve_auth_from_arguments

    monkeypatch.setenv(INTROSPECTION_SECRET_VARIABLE, "s3cret")
    args = build_parser().parse_args(
        ["serve", *HTTP, *ISSUED, *INTROSPECT, "--auth-client-id", "rs"]
    )
    auth = serve_auth_from_arguments(args)
    assert auth is not None
    assert auth.resource.resource == "http://127.0.0.1:8765/mcp"
    request_ = auth.verifier.verify("tok", resource=auth.resource.resource, now=0).next_step()
    assert getattr(request_, "url", None) == "https://as.example.com/introspect"
    assert ("Authorization", "Basic cnM6czNjcmV0") in getattr(request_, "headers", ())
    assert "s3cret" not in repr(auth)
