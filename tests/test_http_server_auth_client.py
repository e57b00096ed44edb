"""Our own HTTP clients with ``auth=BearerToken(...)`` against our protected built-in
servers, over real loopback HTTP: the blocking client against the asyncio, trio and ASGI
(hypercorn) servers, and the asyncio and trio clients against the server of their runtime.
A valid token reaches the tool, whose handler sees the principal; an expired, forged or
other-audience token and one without the required scope make the opening fail: the client
raises :class:`McpError` with the server's refusal (the JSON-RPC error body of its 401 or
403: "invalid token: <reason>", "insufficient scope: ..."); the token itself is never in
the error."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest

pytest.importorskip("joserfc")
pytest.importorskip("h11")

from test_http_server_auth import mint
from test_http_server_auth_runtimes import (
    free_port,
    in_thread,
    make_auth,
    run_asgi,
    run_asyncio,
    run_trio,
)

from mcp_sansio.auth import BearerToken
from mcp_sansio.session import McpError

LIMIT = 10.0
SERVERS: dict[str, Callable[..., Any]] = {
    "asyncio": run_asyncio,
    "trio": run_trio,
    "asgi": run_asgi,
}


def _text(result: Any) -> str:
    return str(result["content"][0]["text"])


def _blocking(url: str, token: str) -> str | Exception:
    from mcp_sansio.blocking import Client

    try:
        with Client.connect_http(url, auth=BearerToken(token), timeout=LIMIT) as client:
            return _text(client.call_tool("whoami", {}))
    except Exception as exc:
        return exc


async def _asyncio(url: str, token: str) -> str | Exception:
    from mcp_sansio.asyncio import Client

    client = Client.connect_http(url, auth=BearerToken(token), timeout=LIMIT)
    try:
        await client.open()
    except Exception as exc:
        return exc
    try:
        return _text(await client.call_tool("whoami", {}))
    except Exception as exc:
        return exc
    finally:
        await client.aclose()


async def _trio(url: str, token: str) -> str | Exception:
    from mcp_sansio.trio import Client

    try:
        async with Client.connect_http(url, auth=BearerToken(token), timeout=LIMIT) as client:
            return _text(await client.call_tool("whoami", {}))
    except Exception as exc:
        return exc


def _cases(resource: str) -> list[tuple[str, str, str | None]]:
    """(name, token, what the answer holds: the tool's text, or a part of the error)."""
    return [
        ("valid", mint(resource), "alice|mcp:tools"),
        ("expired", mint(resource, exp=1, iat=None), "invalid token: the token has expired"),
        ("forged", mint(resource, key=_other_key()), "invalid token: the token's signature"),
        ("other audience", mint("http://127.0.0.1:1/mcp"), "invalid token: the token is not for"),
        ("insufficient scope", mint(resource, scope="mcp:other"), "insufficient scope: "),
    ]


def _other_key() -> Any:
    from test_http_server_auth import OTHER_KEY

    return OTHER_KEY


def _check(name: str, token: str, expected: str | None, got: str | Exception) -> None:
    if name == "valid":
        assert got == expected, got
        return
    assert isinstance(got, Exception), (name, got)
    message = str(got)
    assert token not in message
    # the client reports the refusal's JSON-RPC error body (the 401/403 status itself is
    # not in the message: see the module docstring)
    assert isinstance(got, McpError), (name, got)
    assert expected is not None
    assert expected in message, (name, message)


@pytest.mark.parametrize("runtime", sorted(SERVERS))
def test_blocking_client_against_each_server(runtime: str) -> None:
    port = free_port()
    auth, resource = make_auth(port, None)
    with in_thread(SERVERS[runtime](port, auth)):
        for name, token, expected in _cases(resource):
            _check(name, token, expected, _blocking(resource, token))


def test_asyncio_client_against_the_asyncio_server() -> None:
    port = free_port()
    auth, resource = make_auth(port, None)
    with in_thread(run_asyncio(port, auth)):
        for name, token, expected in _cases(resource):
            _check(name, token, expected, asyncio.run(_asyncio(resource, token)))


def test_trio_client_against_the_trio_server() -> None:
    trio = pytest.importorskip("trio")
    port = free_port()
    auth, resource = make_auth(port, None)
    with in_thread(run_trio(port, auth)):
        for name, token, expected in _cases(resource):
            _check(name, token, expected, trio.run(_trio, resource, token))


def test_head_of_the_metadata_is_answered() -> None:
    # RFC 9110 section 9.3.2: the server "MUST NOT send content in the response" to HEAD;
    # the answer is the GET's head (200) or a 405
    import http.client

    port = free_port()
    auth, _resource = make_auth(port, None)
    with in_thread(run_asyncio(port, auth)):
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=LIMIT)
        try:
            conn.request("HEAD", "/.well-known/oauth-protected-resource/mcp")
            response = conn.getresponse()
            assert response.status in (200, 405)
            assert response.read() == b""
        finally:
            conn.close()


@pytest.mark.parametrize("version", ["2025-06-18", "2025-11-25", "2026-07-28"])
def test_our_oauth_client_discovers_through_our_server(version: str) -> None:
    # sans-IO both sides: the server's 401 goes to OAuthClient.challenged, the flow's GET of
    # the resource metadata is answered by the server itself, and the flow takes the
    # document (its resource is the server's URL, RFC 9728 section 3.3) and goes on to the
    # authorization server's metadata (RFC 8414)
    from urllib.parse import urlsplit

    from test_http_server_auth import build

    from mcp_sansio.auth import ClientInfo, HttpRequest, OAuthClient
    from mcp_sansio.http import HttpServer, ResponseHead

    resource = "http://127.0.0.1:8000/mcp"
    auth, _ = make_auth(8000, None)
    server = HttpServer(build(), auth=auth)
    host = ("host", "127.0.0.1:8000")
    post = [host, ("accept", "application/json, text/event-stream")]
    head = server.begin("POST", "/mcp", [*post, ("content-type", "application/json")])
    answer = head.next_output()
    assert isinstance(answer, ResponseHead)
    client = OAuthClient(
        resource, version=version, redirect_uri="http://127.0.0.1:9/cb", client=ClientInfo("app")
    )
    flow = client.challenged(answer.status, list(answer.headers), now=0.0)
    assert flow is not None
    step = flow.next_step()
    assert isinstance(step, HttpRequest)
    assert step.url == "http://127.0.0.1:8000/.well-known/oauth-protected-resource/mcp"
    ex = server.begin(step.method, urlsplit(step.url).path, [host])
    meta_head, body = ex.next_output(), ex.next_output()
    assert isinstance(meta_head, ResponseHead)
    assert isinstance(body, bytes)
    flow.receive_response(meta_head.status, list(meta_head.headers), body)
    step = flow.next_step()
    assert isinstance(step, HttpRequest)
    assert step.url == "https://as.example.com/.well-known/oauth-authorization-server"
