"""IntrospectionVerifier (auth/_introspection.py): a verdict cached for one resource must
not be reused for another (MCP: servers "**MUST** validate that access tokens were issued
specifically for them as the intended audience"): one verifier shared by two endpoints
asks the introspection endpoint again, or refuses, for the second (fixed in f362fea). A
failed introspection is no verdict: 503, never cached; an inactive token's refusal is
kept."""

from __future__ import annotations

import orjson
import pytest

from mcp_sansio.auth._introspection import IntrospectionVerifier
from mcp_sansio.auth._oauth import HttpRequest
from mcp_sansio.auth._resource import InvalidToken, Principal, Unavailable

A = "http://127.0.0.1:8000/a/mcp"
B = "http://127.0.0.1:8000/b/mcp"


def _verifier() -> IntrospectionVerifier:
    return IntrospectionVerifier(
        "https://as.example.com/introspect", client_id="rs", client_secret="s"
    )


def test_a_fresh_verifier_refuses_a_token_for_another_resource() -> None:
    v = _verifier().verify("tok", resource=B, now=100)
    body = orjson.dumps({"active": True, "aud": A, "sub": "alice", "exp": 1000})
    v.receive_response(200, (), body, now=100)
    assert not isinstance(v.next_step(), Principal)


def test_a_verdict_for_one_resource_is_not_reused_for_another() -> None:
    verifier = _verifier()
    v = verifier.verify("tok", resource=A, now=100)
    body = orjson.dumps({"active": True, "aud": A, "sub": "alice", "exp": 1000})
    v.receive_response(200, (), body, now=100)
    assert isinstance(v.next_step(), Principal)
    again = verifier.verify("tok", resource=B, now=101).next_step()
    assert not isinstance(again, Principal)  # asked again (an HttpRequest) or refused


@pytest.mark.parametrize(
    ("status", "body"),
    [
        (0, b""),  # the request could not be made
        (500, b'{"error": "server_error"}'),
        (401, b'{"error": "invalid_client"}'),  # the resource server's own credentials
        (200, b"<html>"),
        (200, b"[]"),
        (200, b'{"scope": "a"}'),  # no active: not an introspection answer
    ],
)
def test_a_failed_introspection_is_no_verdict_on_the_token(status: int, body: bytes) -> None:
    """RFC 7662 section 2.2: ``active`` is REQUIRED; an answer without it, or no answer,
    says nothing of the token: Unavailable (the server answers 503), never kept, so the
    next request asks again."""
    verifier = _verifier()
    v = verifier.verify("tok", resource=A, now=100)
    v.receive_response(status, (), body, now=100)
    assert isinstance(v.next_step(), Unavailable)
    assert len(verifier.cache) == 0
    assert isinstance(verifier.verify("tok", resource=A, now=101).next_step(), HttpRequest)


def test_an_inactive_token_is_refused_and_the_refusal_kept() -> None:
    verifier = _verifier()
    v = verifier.verify("tok", resource=A, now=100)
    v.receive_response(200, (), b'{"active": false}', now=100)
    assert isinstance(v.next_step(), InvalidToken)
    assert isinstance(verifier.verify("tok", resource=A, now=101).next_step(), InvalidToken)
