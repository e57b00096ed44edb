"""The HTTP clients of the three runtimes (blocking, asyncio, trio) with ``auth=`` and
``open_url=``, against our MCP server behind the loopback :class:`Guard` of
test_http_client_auth_fixture.py (a resource server demanding bearer tokens, its metadata,
a toy authorization server): a 401 runs the flow and the request goes again, with the
token and the same body; a 403 ``insufficient_scope`` steps up; a flow's failure fails the
call with the flow's AuthError; no ``open_url`` handler is a clear error; no token in any
error or log line; the GET stream and the DELETE carry the header. Every wait is bounded.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

pytest.importorskip("h11")

from test_http_client_auth_fixture import LIMIT, FlowAuth, approve, guarded

from mcp_sansio.auth import AuthError, ResourceMetadataError, TokenErrorResponse
from mcp_sansio.auth._static import BearerToken
from mcp_sansio.session import McpError

V2025 = "2025-11-25"
RUNTIMES = pytest.mark.parametrize("runtime", ["blocking", "asyncio", "trio"])
ERAS = pytest.mark.parametrize("versions", [[V2025], None], ids=["initialize", "default"])
Calls = list[tuple[str, dict[str, Any]]]


def session(runtime: str, url: str, calls: Calls, **options: Any) -> list[Any]:
    """Open a client of ``runtime``, make ``calls`` in order, close: the outcome of each
    (its text, or the exception); the opening's exception alone when it fails."""
    if runtime == "blocking":
        return _blocking(url, calls, options)
    if runtime == "asyncio":
        return asyncio.run(asyncio.wait_for(_asyncio(url, calls, options), 3 * LIMIT))
    trio = pytest.importorskip("trio")
    out: list[Any] = []

    async def bounded() -> None:
        with trio.fail_after(3 * LIMIT):
            out.extend(await _trio(url, calls, options))

    trio.run(bounded)
    return out


def _text(result: Any) -> str:
    return str(result["content"][0]["text"])


def _blocking(url: str, calls: Calls, options: dict[str, Any]) -> list[Any]:
    from mcp_sansio.blocking import Client

    try:
        client = Client.connect_http(url, timeout=LIMIT, **options)
    except Exception as exc:
        return [exc]
    out: list[Any] = []
    with client:
        for name, arguments in calls:
            try:
                out.append(_text(client.call_tool(name, arguments)))
            except Exception as exc:
                out.append(exc)
    return out


async def _asyncio(url: str, calls: Calls, options: dict[str, Any]) -> list[Any]:
    from mcp_sansio.asyncio import Client

    client = Client.connect_http(url, timeout=LIMIT, **options)
    try:
        await client.open()
    except Exception as exc:
        return [exc]
    out: list[Any] = []
    try:
        for name, arguments in calls:
            try:
                out.append(_text(await client.call_tool(name, arguments)))
            except Exception as exc:
                out.append(exc)
    finally:
        await client.aclose()
    return out


async def _trio(url: str, calls: Calls, options: dict[str, Any]) -> list[Any]:
    from mcp_sansio.trio import Client

    client = Client.connect_http(url, timeout=LIMIT, **options)
    try:
        await client.__aenter__()
    except Exception as exc:
        return [exc]
    out: list[Any] = []
    try:
        for name, arguments in calls:
            try:
                out.append(_text(await client.call_tool(name, arguments)))
            except Exception as exc:
                out.append(exc)
    finally:
        await client.__aexit__(None, None, None)
    return out


def _async_approve(runtime: str) -> Callable[[str], Awaitable[str]]:
    """An ``async def`` open_url handler for ``runtime`` (the browser in a thread)."""
    if runtime == "asyncio":

        async def on_asyncio(url: str) -> str:
            return await asyncio.get_running_loop().run_in_executor(None, approve, url)

        return on_asyncio
    import trio

    async def on_trio(url: str) -> str:
        return await trio.to_thread.run_sync(approve, url)

    return on_trio


def _bearer(auth: FlowAuth) -> str:
    return f"Bearer {auth.authorized_with[-1].tokens.access_token}"


# ------------------------------------------------------------------ the flow


@RUNTIMES
@ERAS
def test_401_runs_the_flow_and_sends_the_request_again(
    runtime: str, versions: list[str] | None
) -> None:
    with guarded() as guard:
        auth = FlowAuth(guard.url)
        out = session(
            runtime,
            guard.url,
            [("echo", {"m": "hi"})],
            auth=auth,
            open_url=approve,
            versions=versions,
        )
        assert out == ["Echo: hi"]
        assert [status for status, _ in auth.flows] == [401]
        assert len(auth.authorized_with) == 1
        assert guard.token_requests == 1
        seen = guard.mcp()
        assert (seen[0].status, seen[0].authorization) == (401, None)
        # the held request went again exactly (same JSON-RPC body), with the token
        assert seen[1].body == seen[0].body
        assert all(s.authorization == _bearer(auth) for s in seen[1:] if s.method != "DELETE")
        assert all(s.status == 200 for s in seen[1:])
        # every answer of the MCP server was shown to the ClientAuth, the 401 and the
        # successes alike (ClientAuth.answered: where a DPoP-Nonce would be taken)
        # (the guard records 200 for a request it let through; our server answers a
        # notification 202)
        assert len(auth.answered_with) == len(seen)
        assert auth.answered_with[0] == 401
        assert set(auth.answered_with[1:]) <= {200, 202}


@pytest.mark.parametrize("runtime", ["asyncio", "trio"])
def test_async_open_url_handler(runtime: str) -> None:
    with guarded() as guard:
        auth = FlowAuth(guard.url)
        out = session(
            runtime, guard.url, [("echo", {"m": "a"})], auth=auth, open_url=_async_approve(runtime)
        )
        assert out == ["Echo: a"]
        assert len(auth.authorized_with) == 1


@RUNTIMES
def test_403_insufficient_scope_steps_up(runtime: str) -> None:
    with guarded() as guard:
        auth = FlowAuth(guard.url)
        calls: Calls = [("echo", {"m": "1"}), ("admin", {}), ("echo", {"m": "2"})]
        out = session(runtime, guard.url, calls, auth=auth, open_url=approve)
        assert out == ["Echo: 1", "admin done", "Echo: 2"]
        assert [status for status, _ in auth.flows] == [401, 403]
        challenge = dict(auth.flows[1][1])["www-authenticate"]
        assert 'error="insufficient_scope"' in challenge
        assert auth.authorized_with[-1].tokens.scope == "mcp admin"
        seen = guard.mcp()
        refused = [i for i, s in enumerate(seen) if s.status == 403]
        assert len(refused) == 1
        again = seen[refused[0] + 1]
        assert again.body == seen[refused[0]].body  # the tools/call, exactly
        assert (again.status, again.authorization) == (200, _bearer(auth))


# ------------------------------------------------------------------ failures


@RUNTIMES
def test_a_flow_error_fails_the_opening_with_it(runtime: str) -> None:
    with guarded() as guard:
        guard.fail_token = True
        auth = FlowAuth(guard.url, max_flows=1)
        out = session(runtime, guard.url, [], auth=auth, open_url=approve, versions=[V2025])
        assert len(out) == 1
        error = out[0]
        assert isinstance(error, TokenErrorResponse), repr(error)
        assert error.step == "token request"
        assert "invalid_grant" in str(error)


@RUNTIMES
def test_a_flow_error_fails_the_call_with_it(runtime: str) -> None:
    with guarded() as guard:
        auth = FlowAuth(guard.url)
        calls: Calls = [("echo", {"m": "1"}), ("admin", {}), ("echo", {"m": "2"})]
        guard.scoped["admin"] = "admin"

        def refuse_then_approve(url: str) -> str:
            if len(auth.flows) > 1:
                guard.broken_metadata = False
                guard.fail_token = True  # the step-up's token request is refused
            return approve(url)

        out = session(runtime, guard.url, calls, auth=auth, open_url=refuse_then_approve)
        assert out[0] == "Echo: 1"
        assert isinstance(out[1], TokenErrorResponse), repr(out[1])
        assert out[2] == "Echo: 2"  # the old token still works for echo


@RUNTIMES
def test_a_metadata_error_names_its_step(runtime: str) -> None:
    with guarded() as guard:
        guard.broken_metadata = True
        auth = FlowAuth(guard.url, max_flows=1)
        out = session(runtime, guard.url, [], auth=auth, open_url=approve, versions=[V2025])
        assert isinstance(out[0], ResourceMetadataError), repr(out[0])
        assert str(out[0]).startswith("resource metadata: ")


@RUNTIMES
def test_no_open_url_handler_is_a_clear_error(runtime: str) -> None:
    with guarded() as guard:
        auth = FlowAuth(guard.url, max_flows=1)
        out = session(runtime, guard.url, [], auth=auth, versions=[V2025])
        error = out[0]
        assert isinstance(error, AuthError), repr(error)
        assert error.step == "authorization request"
        assert "open_url" in str(error)
        assert guard.token_requests == 0


@RUNTIMES
def test_no_token_in_errors_or_logs(runtime: str, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    with guarded() as guard:
        # a given token the server does not know: BearerToken fails on the challenge
        out = session(runtime, guard.url, [], auth=BearerToken("given-SECRET"), versions=[V2025])
        error = out[0]
        assert isinstance(error, McpError), repr(error)
        assert "HTTP 401" in str(error)
        assert "invalid_token" in str(error)
        assert guard.mcp()[0].authorization == "Bearer given-SECRET"
        # issued tokens, then a failed step-up
        auth = FlowAuth(guard.url)

        def then_refuse(url: str) -> str:
            guard.fail_token = len(auth.flows) > 1
            return approve(url)

        out += session(
            runtime, guard.url, [("echo", {}), ("admin", {})], auth=auth, open_url=then_refuse
        )
    assert isinstance(out[-1], AuthError)
    assert auth.authorized_with
    for item in out:
        assert "SECRET" not in str(item)
        assert "SECRET" not in repr(item)
    assert "SECRET" not in caplog.text
    assert "SECRET" not in repr(BearerToken("given-SECRET"))


@RUNTIMES
def test_the_get_stream_and_the_delete_carry_the_header(runtime: str) -> None:
    with guarded() as guard:
        auth = FlowAuth(guard.url)
        out = session(
            runtime,
            guard.url,
            [("echo", {"m": "x"})],
            auth=auth,
            open_url=approve,
            versions=[V2025],
            listen=True,
        )
        assert out == ["Echo: x"]
        seen = guard.mcp()
        methods = [s.method for s in seen]
        assert "GET" in methods
        assert methods[-1] == "DELETE"
        for s in seen:
            if s.method in ("GET", "DELETE"):
                assert s.authorization == _bearer(auth), s


class _BrokenHeader:
    """A ClientAuth whose header value h11 refuses (its error would quote it)."""

    def headers(self, method: str, url: str, *, now: float) -> list[tuple[str, str]]:
        return [("Authorization", "Bearer SE\nCRET")]

    def challenged(self, status: int, headers: Any, *, now: float) -> None:
        return None

    def answered(self, status: int, headers: Any, *, now: float) -> None:
        return None

    def authorized(self, result: Any, *, now: float) -> None:
        raise AssertionError


@RUNTIMES
def test_an_invalid_header_is_not_quoted(runtime: str, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    with guarded() as guard:
        out = session(runtime, guard.url, [], auth=_BrokenHeader(), versions=[V2025])
    assert isinstance(out[0], McpError), repr(out[0])
    assert "invalid 'Authorization' header" in str(out[0])
    assert "CRET" not in str(out[0])
    assert "CRET" not in caplog.text
