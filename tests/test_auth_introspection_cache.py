"""IntrospectionVerifier (auth/_introspection.py): a verdict cached for one resource must
not be reused for another (MCP: servers "**MUST** validate that access tokens were issued
specifically for them as the intended audience"): one verifier shared by two endpoints
asks the introspection endpoint again, or refuses, for the second (fixed in f362fea)."""

from __future__ import annotations

import orjson

from mcp_sansio.auth._introspection import IntrospectionVerifier
from mcp_sansio.auth._resource import Principal

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
