"""The sans-IO sequencing of the HTTP client's authorization (``http/_client_auth.py``),
on a bare :class:`HttpClientTransport` with scripted ClientAuth and Flow fakes: one flow
for two challenges at once, a request that went out before the last flow ended sent again
without asking, a cancelled request not sent again, closing during a flow, failures (the
ClientAuth's, a fetch's, no handler) with their error kept for the runtimes, and what an
unanswered challenge says."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import orjson
import pytest

from mcp_sansio.auth import AuthError, Authorized, HttpRequest, OpenUrl, TokenKey, Tokens
from mcp_sansio.auth._client_auth import Flow
from mcp_sansio.http._client import (
    AuthFetch,
    AuthOpenUrl,
    HttpClientTransport,
    ToSession,
)
from mcp_sansio.http._client import HttpRequest as Post
from mcp_sansio.http._client_auth import authorization_failure
from mcp_sansio.http._client_parts import FetchError
from mcp_sansio.session import McpError

URL = "http://127.0.0.1:8/mcp"
CHALLENGE = [("www-authenticate", 'Bearer error="invalid_token"')]
META = HttpRequest("GET", "http://127.0.0.1:8/.well-known/oauth-protected-resource/mcp")
DONE = Authorized(Tokens("tok-SECRET", "Bearer"), TokenKey("http://127.0.0.1:8", URL))


class ScriptedFlow:
    """Steps in order; each answer (response or redirect) moves to the next."""

    def __init__(self, *steps: Any, fail: BaseException | None = None) -> None:
        self.steps = list(steps)
        self.fail = fail
        self.answers: list[Any] = []
        self.phase = "server metadata"

    def next_step(self) -> Any:
        return self.steps[0]

    def receive_response(
        self, status: int, headers: Any = (), body: bytes = b"", *, now: Any = None
    ) -> None:
        self.answers.append((status, body, now))
        if self.fail is not None:
            raise self.fail
        self.steps.pop(0)

    def receive_redirect(self, url: str) -> None:
        self.answers.append(url)
        self.steps.pop(0)


class FakeAuth:
    def __init__(self, *flows: Any) -> None:
        self.flows = list(flows)
        self.challenges: list[tuple[int, list[tuple[str, str]], float]] = []
        self.token: str | None = None
        self.authorized_now: list[float] = []
        self.answers: list[tuple[int, list[tuple[str, str]], float]] = []

    def headers(self, method: str, url: str, *, now: float) -> Sequence[tuple[str, str]]:
        assert url == URL
        return [("Authorization", f"Bearer {self.token}")] if self.token else []

    def challenged(
        self, status: int, headers: Sequence[tuple[str, str]], *, now: float
    ) -> Flow | None:
        self.challenges.append((status, list(headers), now))
        flow = self.flows.pop(0) if self.flows else None
        if isinstance(flow, BaseException):
            raise flow
        return flow

    def answered(self, status: int, headers: Sequence[tuple[str, str]], *, now: float) -> None:
        self.answers.append((status, list(headers), now))

    def authorized(self, result: Authorized, *, now: float) -> None:
        self.token = result.tokens.access_token
        self.authorized_now.append(now)


def transport(auth: FakeAuth, open_url: bool = True) -> HttpClientTransport:
    return HttpClientTransport("/mcp", auth=auth, url=URL, clock=lambda: 7.0, open_url=open_url)


def post(t: HttpClientTransport, request_id: int) -> Post:
    line = orjson.dumps({"jsonrpc": "2.0", "id": request_id, "method": "tools/list"}) + b"\n"
    (request,) = t.send(line)
    assert isinstance(request, Post)
    t.request_headers(request)  # written
    return request


def answer(
    t: HttpClientTransport, request: Post, status: int, headers: Any = CHALLENGE
) -> list[Any]:
    t.response_started(request.stream, status, headers)
    return t.response_ended(request.stream)


def errors(actions: list[Any]) -> list[dict[str, Any]]:
    out = b"".join(a.data for a in actions if isinstance(a, ToSession))
    return [orjson.loads(line) for line in out.splitlines()]


def test_two_challenges_one_flow_both_sent_again() -> None:
    flow = ScriptedFlow(META, DONE)
    auth = FakeAuth(flow)
    t = transport(auth)
    first, second = post(t, 1), post(t, 2)
    assert t.request_headers(first) == []
    (fetch,) = answer(t, first, 401)
    assert isinstance(fetch, AuthFetch)
    assert fetch.request == META
    assert answer(t, second, 401) == []  # waits for the flow under way
    assert len(auth.challenges) == 1
    assert auth.challenges[0][0] == 401
    assert auth.challenges[0][2] == 7.0
    again = t.auth_response(fetch.flow, 200, [], b"{}")
    assert again == [first, second]  # the same requests: stream, headers, body
    assert flow.answers == [(200, b"{}", 7.0)]
    assert auth.authorized_now == [7.0]
    assert t.request_headers(first) == [("Authorization", "Bearer tok-SECRET")]
    assert not t.authorizing


def test_a_request_sent_before_the_flow_ended_goes_again_unasked() -> None:
    auth = FakeAuth(ScriptedFlow(DONE))
    t = transport(auth)
    first, late = post(t, 1), post(t, 2)  # both written without a token
    assert answer(t, first, 401) == [first]  # Authorized at once: sent again
    assert answer(t, late, 401) == [late]  # written before that flow ended
    assert len(auth.challenges) == 1
    t.request_headers(late)  # written again, after that flow: a challenge is asked about
    (failed,) = errors(answer(t, late, 401))  # and refused (no second flow)
    assert failed["id"] == 2
    assert len(auth.challenges) == 2


def test_a_cancelled_request_is_not_sent_again() -> None:
    auth = FakeAuth(ScriptedFlow(META, DONE))
    t = transport(auth)
    first = post(t, 1)
    (fetch,) = answer(t, first, 401)
    cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}
    t.send(orjson.dumps(cancel) + b"\n")
    assert not [a for a in t.auth_response(fetch.flow, 200) if a == first]


def test_closing_drops_the_flow() -> None:
    auth = FakeAuth(ScriptedFlow(META, DONE))
    t = transport(auth)
    first = post(t, 1)
    (fetch,) = answer(t, first, 401)
    t.close()
    assert t.auth_response(fetch.flow, 200) == []
    assert auth.token is None


def test_a_flow_error_fails_the_request_with_it() -> None:
    error = AuthError("the document is not JSON", step="resource metadata")
    auth = FakeAuth(ScriptedFlow(META, fail=error))
    t = transport(auth)
    first = post(t, 1)
    (fetch,) = answer(t, first, 401)
    (failed,) = errors(t.auth_response(fetch.flow, 200, [], b"x"))
    assert failed["id"] == 1
    assert (
        failed["error"]["message"]
        == "authorization failed: resource metadata: the document is not JSON"
    )
    data = failed["error"]["data"]
    assert data["status"] == 401
    assert data["authorization"]["step"] == "resource metadata"
    assert data["authorization"]["error"] == "AuthError"

    raised = McpError(failed["error"]["code"], failed["error"]["message"], data)
    assert authorization_failure(t, raised) is error
    assert authorization_failure(t, McpError(-32000, "other", {"status": 401})) is None
    assert not t.authorizing


def test_the_client_auth_raising_fails_the_request() -> None:
    boom = ValueError("tok-SECRET in a message")
    t = transport(FakeAuth(boom))
    first = post(t, 1)
    (failed,) = errors(answer(t, first, 401))
    assert failed["error"]["message"] == "authorization failed: ValueError raised"
    assert "SECRET" not in orjson.dumps(failed).decode()


def test_no_handler_fails_at_the_person_step() -> None:
    auth = FakeAuth(ScriptedFlow(OpenUrl("http://127.0.0.1:8/authorize?x=1"), DONE))
    t = transport(auth, open_url=False)
    first = post(t, 1)
    actions = answer(t, first, 401)
    assert not [a for a in actions if isinstance(a, AuthOpenUrl)]
    (failed,) = errors(actions)
    assert failed["error"]["data"]["authorization"]["step"] == "authorization request"
    assert "open_url" in failed["error"]["message"]


def test_the_person_step_with_a_handler() -> None:
    flow = ScriptedFlow(OpenUrl("http://127.0.0.1:8/authorize?x=1"), DONE)
    t = transport(FakeAuth(flow))
    first = post(t, 1)
    (ask,) = answer(t, first, 401)
    assert ask == AuthOpenUrl(ask.flow, "http://127.0.0.1:8/authorize?x=1")
    assert t.auth_redirect(ask.flow, "http://127.0.0.1:9/cb?code=c") == [first]
    assert flow.answers == ["http://127.0.0.1:9/cb?code=c"]


def test_a_fetch_failure_is_an_auth_error_of_the_step() -> None:
    t = transport(FakeAuth(ScriptedFlow(META, DONE)))
    first = post(t, 1)
    (fetch,) = answer(t, first, 401)
    cause = FetchError("GET http://127.0.0.1:8/x: refused")
    (failed,) = errors(t.auth_failed(fetch.flow, cause))
    assert failed["error"]["data"]["authorization"]["step"] == "server metadata"
    error = t.failure(failed["error"]["data"]["authorization"]["failure"])
    assert isinstance(error, AuthError)
    assert error.__cause__ is cause


def test_an_unanswered_challenge_says_the_servers_error() -> None:
    t = transport(FakeAuth())
    first = post(t, 1)
    (failed,) = errors(answer(t, first, 401))
    assert failed["error"]["message"] == (
        "the server answered HTTP 401 (Bearer challenge: invalid_token)"
    )
    assert failed["error"]["data"] == {"status": 401}


def test_without_auth_nothing_changes() -> None:
    t = HttpClientTransport("/mcp")
    first = post(t, 1)
    assert t.request_headers(first) == []
    (failed,) = errors(answer(t, first, 403, []))
    assert failed["error"]["message"] == "the server answered HTTP 403 without a JSON-RPC error"


def test_reprs_hide_secrets() -> None:
    request = HttpRequest(
        "POST", "http://127.0.0.1:8/token", (("Authorization", "Basic SECRET"),), b"code=SECRET"
    )
    assert "SECRET" not in repr(AuthFetch(1, request))
    with pytest.raises(ValueError, match="url="):
        HttpClientTransport("/mcp", auth=FakeAuth())


def test_every_answer_is_shown_to_the_client_auth_before_a_challenge() -> None:
    auth = FakeAuth(ScriptedFlow(DONE))
    t = transport(auth)
    ok = post(t, 1)
    headers: list[tuple[bytes | str, bytes | str]] = [
        (b"Content-Type", b"application/json"),
        ("DPoP-Nonce", "n-1"),
    ]
    t.response_started(ok.stream, 200, headers)
    assert auth.answers == [
        (200, [("content-type", "application/json"), ("dpop-nonce", "n-1")], 7.0)
    ]
    assert auth.challenges == []  # a success is no challenge
    refused = post(t, 2)
    answer(t, refused, 401)
    assert auth.answers[1] == (401, CHALLENGE, 7.0)
    assert [c[:2] for c in auth.challenges] == [(401, CHALLENGE)]
