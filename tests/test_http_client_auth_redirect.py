"""The loopback redirect helper (``mcp_sansio.blocking._redirect.LoopbackRedirect``): one
GET of its path taken and answered with a page, other paths and methods refused and not
counted, the wait bounded; and as the ``open_url`` handler of each runtime's client, with a
"browser" that follows the toy authorization server's 302 to it."""

from __future__ import annotations

import http.client
import threading
from typing import Any

import pytest

pytest.importorskip("h11")

from test_http_client_auth import RUNTIMES, session
from test_http_client_auth_fixture import LIMIT, FlowAuth, approve, guarded

from mcp_sansio.auth import AuthError
from mcp_sansio.blocking._redirect import LoopbackRedirect


def _get(port: int, target: str, method: str = "GET") -> tuple[int, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=LIMIT)
    try:
        conn.request(method, target)
        response = conn.getresponse()
        return response.status, response.read()
    finally:
        conn.close()


def test_one_redirect_taken_others_refused() -> None:
    with LoopbackRedirect(timeout=LIMIT) as redirect:
        assert redirect.redirect_uri == f"http://127.0.0.1:{redirect.port}/callback"
        got: list[Any] = []
        waiting = threading.Thread(target=lambda: got.append(redirect.wait()))
        waiting.start()
        answers = [
            _get(redirect.port, "/favicon.ico"),
            _get(redirect.port, "/callback?code=c", "POST"),
            _get(redirect.port, "/callback?code=abc&state=xyz"),
        ]
        waiting.join(LIMIT)
    assert [status for status, _ in answers] == [404, 405, 200]
    assert b"Authorization received" in answers[2][1]
    assert got == [f"http://127.0.0.1:{redirect.port}/callback?code=abc&state=xyz"]


def test_an_error_redirect_is_returned_too() -> None:
    with LoopbackRedirect(path="/cb", timeout=LIMIT) as redirect:
        got: list[str] = []
        waiting = threading.Thread(target=lambda: got.append(redirect.wait()))
        waiting.start()
        status, page = _get(redirect.port, "/cb?error=access_denied&state=s")
        waiting.join(LIMIT)
    assert status == 200
    assert b"refused" in page
    assert got == [f"{redirect.redirect_uri}?error=access_denied&state=s"]


def test_the_wait_is_bounded() -> None:
    with LoopbackRedirect() as redirect, pytest.raises(AuthError, match="no redirect") as info:
        redirect.wait(timeout=0.05)
    assert info.value.step == "authorization response"


def test_loopback_only() -> None:
    with pytest.raises(ValueError, match="loopback"):
        LoopbackRedirect(host="0.0.0.0")


def _browser(url: str) -> None:
    """What a browser does: the authorization server's 302, followed to the loopback."""

    def run() -> None:
        location = approve(url)
        parts = location.split("/", 3)
        port = int(parts[2].rsplit(":", 1)[1])
        _get(port, "/" + parts[3])

    threading.Thread(target=run, daemon=True).start()


@RUNTIMES
def test_as_the_open_url_handler(runtime: str) -> None:
    with guarded() as guard, LoopbackRedirect(timeout=LIMIT, announce=_browser) as redirect:
        auth = FlowAuth(guard.url, redirect_uri=redirect.redirect_uri)
        out = session(runtime, guard.url, [("echo", {"m": "r"})], auth=auth, open_url=redirect)
        assert out == ["Echo: r"]
        assert len(auth.authorized_with) == 1
