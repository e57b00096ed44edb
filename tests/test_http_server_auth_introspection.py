"""IntrospectionVerifier (RFC 7662), sans-IO: the request it asks for, each verdict of an
answer, the cache; and through HttpServer.begin/end/fetched: the Fetch work, then the
session; requestState bound to the principal."""

from __future__ import annotations

import base64
from typing import Any

import orjson
import pytest

from mcp_sansio._errors import ValidationError
from mcp_sansio.auth._introspection import IntrospectionVerifier
from mcp_sansio.auth._oauth import HttpRequest
from mcp_sansio.auth._resource import Principal, ProtectedResource, ServerAuth
from mcp_sansio.http import HttpServer
from mcp_sansio.http._sessions import Deliver, Fetch
from mcp_sansio.server import Server

RESOURCE = "http://127.0.0.1:8000/mcp"
ENDPOINT = "https://as.example.com/introspect"


def verifier() -> IntrospectionVerifier:
    return IntrospectionVerifier(ENDPOINT, client_id="rs", client_secret="s3cret")


def answer(**fields: Any) -> bytes:
    doc = {"active": True, "aud": RESOURCE, "sub": "alice", "client_id": "app", "scope": "a b"}
    doc.update(fields)
    return orjson.dumps({k: v for k, v in doc.items() if v is not None})


def test_the_request_is_a_form_post_with_client_authentication() -> None:
    step = verifier().verify("tok-1", resource=RESOURCE, now=0).next_step()
    assert isinstance(step, HttpRequest)
    assert step.method == "POST"
    assert step.url == ENDPOINT
    headers = dict(step.headers)
    assert headers["Content-Type"] == "application/x-www-form-urlencoded"
    assert headers["Authorization"] == "Basic " + base64.b64encode(b"rs:s3cret").decode()
    assert step.body == b"token=tok-1&token_type_hint=access_token"
    assert "tok-1" not in repr(step)
    assert "s3cret" not in repr(step)


@pytest.mark.parametrize(
    ("body", "ok"),
    [
        (answer(), True),
        (answer(active=False), False),
        (orjson.dumps({"aud": RESOURCE}), False),
        (answer(aud="https://other.example.com/mcp"), False),
        (answer(aud=None), False),
        (answer(exp=10), False),
        (answer(exp=10_000), True),
        (b"not json", False),
    ],
)
def test_verdicts(body: bytes, ok: bool) -> None:
    v = verifier().verify("tok", resource=RESOURCE, now=100)
    v.receive_response(200, (), body, now=100)
    verdict = v.next_step()
    assert isinstance(verdict, Principal) is ok
    if ok:
        assert isinstance(verdict, Principal)
        assert verdict.subject == "alice"
        assert verdict.scopes == {"a", "b"}


def test_the_cache_reuses_a_verdict_until_exp() -> None:
    ver = verifier()
    v = ver.verify("tok", resource=RESOURCE, now=100)
    v.receive_response(200, (), answer(exp=130), now=100)
    assert isinstance(ver.verify("tok", resource=RESOURCE, now=120).next_step(), Principal)
    assert isinstance(ver.verify("tok", resource=RESOURCE, now=130).next_step(), HttpRequest)
    assert isinstance(ver.verify("other", resource=RESOURCE, now=120).next_step(), HttpRequest)


def core() -> HttpServer:
    server = Server("t", "1")
    pr = ProtectedResource(RESOURCE, ("https://as.example.com",), required_scopes=("a",))
    return HttpServer(server, auth=ServerAuth(pr, verifier()), state_clock=lambda: 100.0)


INIT = orjson.dumps(
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"},
        },
    }
)
HEADERS = [
    ("host", "127.0.0.1:8000"),
    ("accept", "application/json, text/event-stream"),
    ("content-type", "application/json"),
    ("authorization", "Bearer tok-9"),
]


def test_the_server_asks_for_the_introspection_then_serves() -> None:
    c = core()
    ex = c.begin("POST", "/mcp", HEADERS)
    assert not ex.finished
    assert "authorization" not in ex.headers  # the token goes no further
    ex.receive_body(INIT, c.max_body_size)
    (work,) = c.end(ex)
    assert isinstance(work, Fetch)
    assert work.request.url == ENDPOINT
    assert not c.sessions  # no session before the token is verified
    out = c.fetched(ex, 200, (), answer())
    delivers = [w for w in out if isinstance(w, Deliver)]
    assert len(delivers) == 1
    assert delivers[0].session.principal.subject == "alice"


def test_a_refused_introspection_is_401_and_makes_no_session() -> None:
    c = core()
    ex = c.begin("POST", "/mcp", HEADERS)
    ex.receive_body(INIT, c.max_body_size)
    c.end(ex)
    c.fetched(ex, 200, (), answer(active=False))
    head = ex.next_output()
    assert head is not None
    assert getattr(head, "status", None) == 401
    assert not c.sessions
    # the refusal is kept (negative_ttl): the same token is refused without a request
    ex = c.begin("POST", "/mcp", HEADERS)
    assert getattr(ex.next_output(), "status", None) == 401
    # a failed call (status 0) says nothing of the token: 503 with Retry-After (not 401
    # invalid_token, which would send the client to authorize again), and not kept
    other = [*HEADERS[:-1], ("authorization", "Bearer tok-10")]
    for _ in range(2):
        ex = c.begin("POST", "/mcp", other)
        ex.receive_body(INIT, c.max_body_size)
        assert isinstance(c.end(ex)[0], Fetch)
        c.fetched(ex, 0)
        head = ex.next_output()
        assert getattr(head, "status", None) == 503
        assert ("retry-after", "30") in getattr(head, "headers", ())
        assert not any(k == "www-authenticate" for k, _ in getattr(head, "headers", ()))


def test_request_state_is_bound_to_the_principal() -> None:
    c = core()
    alice = Principal("alice", "app", frozenset({"a"}))
    mallory = Principal("mallory", "app", frozenset({"a"}))
    one = c._new_session(True, alice)
    # the session seals and opens its requestState for its principal (ServerSession's
    # state_principal, which its finish() and the restoring of inputs pass as principal=)
    assert one.session.state_principal == alice.key
    seal = one.session._seal
    sealed = seal.seal(
        {"x": 1}, method="tools/call", params={}, now=0, principal=one.session.state_principal
    )
    same = c._new_session(True, Principal("alice", "app", frozenset({"a", "b"})))
    assert same.session.state_principal == alice.key
    opened = seal.open(
        sealed, method="tools/call", params={}, now=1, principal=same.session.state_principal
    )
    assert opened == {"x": 1}
    other = c._new_session(True, mallory)
    with pytest.raises(ValidationError, match="another principal"):
        seal.open(
            sealed, method="tools/call", params={}, now=1, principal=other.session.state_principal
        )
