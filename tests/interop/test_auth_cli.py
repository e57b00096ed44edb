"""The command line's authorization against real parts: ``mcp-sansio call --http URL
--interactive`` at the MCP server protected with the Python SDK's helpers
(``sdk_auth_server.py``), oidc-provider as the authorization server (``peers.py``).

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

from .authorization import Browser, oidc_provider, query, stderr_text
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
