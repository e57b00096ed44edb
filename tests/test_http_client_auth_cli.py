"""``mcp-sansio call --http`` and ``probe --http`` with authorization, in-process
(``mcp_sansio._cli.main``) against the loopback Guard of test_http_client_auth_fixture.py:
``--token`` and the environment variable, a refused token (no token in the output), the
interactive flow (the browser stood in for: ``webbrowser.open`` follows the toy server's
302 to the loopback redirect), a pre-registered ``--client-id``, usage errors, and the
probe sending the token with every request."""

from __future__ import annotations

import io
import json
import threading
import urllib.request
from typing import Any

import pytest

pytest.importorskip("h11")

from test_http_client_auth_fixture import Guard, approve, guarded

from mcp_sansio._cli import main
from mcp_sansio._cli_auth import TOKEN_VARIABLE

ECHO = ["tool", "echo", "--args", '{"m": "cli"}']


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(["call", *argv], out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def _seed(guard: Guard, token: str = "given-SECRET") -> str:
    with guard.lock:
        guard.tokens[token] = {"mcp"}
    return token


def _echoed(out: str) -> str:
    return str(json.loads(out)["content"][0]["text"])


def test_token() -> None:
    with guarded() as guard:
        token = _seed(guard)
        code, out, err = run("--http", guard.url, "--token", token, *ECHO)
        assert (code, err) == (0, "")
        assert _echoed(out) == "Echo: cli"
        assert {s.authorization for s in guard.mcp()} == {f"Bearer {token}"}


def test_token_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    with guarded() as guard:
        monkeypatch.setenv(TOKEN_VARIABLE, _seed(guard))
        code, out, _ = run("--http", guard.url, *ECHO)
        assert code == 0
        assert _echoed(out) == "Echo: cli"


def test_a_refused_token_is_not_shown() -> None:
    with guarded() as guard:
        code, out, err = run("--http", guard.url, "--token", "wrong-SECRET", *ECHO)
        assert code == 1
        assert "HTTP 401" in err
        assert "invalid_token" in err
        assert "SECRET" not in out + err


def _browser(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """``webbrowser.open`` as a browser would do it (in a thread): the authorization URL,
    its 302, then the loopback redirect."""
    opened: list[str] = []

    def open_url(url: str, *args: Any, **kwargs: Any) -> bool:
        opened.append(url)

        def follow() -> None:
            with urllib.request.urlopen(approve(url), timeout=10) as response:
                response.read()

        threading.Thread(target=follow, daemon=True).start()
        return True

    monkeypatch.setattr("webbrowser.open", open_url)
    return opened


@pytest.mark.parametrize("versions", ["2025-11-25", None], ids=["2025-11-25", "default"])
def test_interactive(monkeypatch: pytest.MonkeyPatch, versions: str | None) -> None:
    opened = _browser(monkeypatch)
    with guarded() as guard:
        more = ["--versions", versions] if versions else []
        code, out, err = run("--http", guard.url, "--interactive", *more, *ECHO)
        assert code == 0, err
        assert _echoed(out) == "Echo: cli"
        assert len(opened) == 1
        assert opened[0] in err  # the URL is printed too
        assert [doc.get("client_name") for doc in guard.registered] == ["mcp-sansio"]
        assert guard.registered[0]["redirect_uris"][0].startswith("http://127.0.0.1:")
        assert "SECRET" not in out + err


def test_pre_registered_client(monkeypatch: pytest.MonkeyPatch) -> None:
    opened = _browser(monkeypatch)
    with guarded() as guard:
        code, _, err = run(
            "--http", guard.url, "--client-id", "pre-1", "--versions", "2025-11-25", *ECHO
        )
        assert code == 0, err
        assert "client_id=pre-1" in opened[0]
        assert guard.registered == []


def test_no_interactive_means_the_401_fails() -> None:
    with guarded() as guard:
        code, _, err = run("--http", guard.url, "--no-interactive", *ECHO)
        assert code == 1
        assert "HTTP 401" in err


def test_a_failed_flow_is_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    _browser(monkeypatch)
    with guarded() as guard:
        guard.fail_token = True
        code, _, err = run("--http", guard.url, "--interactive", "--versions", "2025-11-25", *ECHO)
        assert code == 1
        assert "authorization failed: token request:" in err


def test_a_failed_flow_asks_the_person_once_with_the_default_versions(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With both eras the call opens with a ``server/discover`` probe: its failed flow ends
    the opening (no fallback to ``initialize``, which would meet the same 401 and open the
    browser a second time)."""
    opened = _browser(monkeypatch)
    with guarded() as guard:
        guard.fail_token = True
        code, _, err = run("--http", guard.url, "--interactive", *ECHO)
        assert code == 1
        assert "authorization failed: token request:" in err
        assert len(opened) == 1
        assert [json.loads(s.body)["method"] for s in guard.mcp()] == ["server/discover"]


HTTP = ["--http", "http://127.0.0.1:1/mcp"]
CC = [*HTTP, "--client-id", "c", "--client-credentials"]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--token", "t", *ECHO], "--token is for an HTTP server"),
        ([*HTTP, "--client-secret", "s", *ECHO], "goes with"),
        ([*HTTP, "--token", "t", "--client-id", "c", *ECHO], "not both"),
        (["--client-credentials", *ECHO], "is for an HTTP server"),
        ([*HTTP, "--client-credentials", *ECHO], "needs --client-id"),
        ([*CC, *ECHO], "needs --client-secret"),
        ([*CC, "--client-secret", "s", "--interactive", *ECHO], "not with --interactive"),
        ([*HTTP, "--client-id", "c", "--client-key", __file__, *ECHO], "goes with"),
        ([*CC, "--client-key", "/no/such/key", *ECHO], "cannot read /no/such/key"),
        ([*CC, "--client-key", __file__, *ECHO], "--client-key: the private key cannot be read"),
    ],
)
def test_usage_errors(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, _ = run(*argv)
    assert code == 2
    assert message in capsys.readouterr().err


def test_client_credentials_choose_the_grant(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    """``--client-credentials``: a GrantAuth of ClientCredentials, its secret from the
    environment (never an option's echo); a key file (a JWK's JSON) for private_key_jwt;
    and a token in the environment does not outrank an explicit ``--client-id``."""
    pytest.importorskip("joserfc")
    import argparse

    from joserfc.jwk import ECKey

    from mcp_sansio._cli_auth import (
        SECRET_VARIABLE,
        add_auth_arguments,
        auth_from_arguments,
        check_auth_arguments,
    )
    from mcp_sansio.auth import ClientCredentials, GrantAuth

    parser = argparse.ArgumentParser()
    parser.add_argument("--http")
    add_auth_arguments(parser)

    def chosen(*argv: str) -> Any:
        args = parser.parse_args(["--http", "http://127.0.0.1:1/mcp", *argv])
        check_auth_arguments(parser, args)
        auth, open_url, done = auth_from_arguments(args, args.http, io.StringIO())
        done()
        return auth, open_url

    monkeypatch.setenv(TOKEN_VARIABLE, "env-token")
    monkeypatch.setenv(SECRET_VARIABLE, "env-SECRET")
    auth, open_url = chosen("--client-id", "svc", "--client-credentials")
    assert isinstance(auth, GrantAuth)
    assert open_url is None
    assert auth.grant == ClientCredentials("svc", client_secret="env-SECRET")
    assert "env-SECRET" not in repr(auth)
    auth, _ = chosen("--client-id", "svc", "--client-secret", "s", "--client-credentials")
    assert auth.grant == ClientCredentials("svc", client_secret="s")
    key = ECKey.generate_key("P-256")
    path = tmp_path / "key.jwk"
    path.write_text(json.dumps(key.as_dict(private=True)))
    auth, _ = chosen("--client-id", "svc", "--client-credentials", "--client-key", str(path))
    assert auth.grant.private_key == key.as_dict(private=True)
    assert auth.grant.client_secret is None  # the environment's secret is not sent with a key
    assert auth.grant.algorithm == "ES256"
    auth, _ = chosen("--client-id", "pre-1", "--no-interactive")
    assert type(auth).__name__ == "_Interactive"  # the pre-registered client, not the token
    auth, _ = chosen()
    assert type(auth).__name__ == "BearerToken"


def test_probe_sends_the_token() -> None:
    pytest.importorskip("hypothesis")
    from mcp_sansio._cli_auth import command_line_auth
    from mcp_sansio.testing._command import probe_command

    with guarded() as guard:
        token = _seed(guard)
        out, err = io.StringIO(), io.StringIO()
        code = probe_command(
            http=guard.url,
            command=None,
            json_output=True,
            examples=0,
            seed=1,
            timeout=5.0,
            versions=["2025-11-25"],
            jobs=2,
            out=out,
            err=err,
            auth=command_line_auth(guard.url, token=token, err=err),
        )
        assert code in (0, 1), err.getvalue()
        seen = guard.mcp()
        assert len(seen) > 10
        # (the probe's session-ending DELETE is built in testing/_http_target.py, which
        # takes no headers yet: it goes without, and its answer does not matter)
        bad = [s for s in seen if s.authorization != f"Bearer {token}" and s.method != "DELETE"]
        assert not bad, bad[:3]
