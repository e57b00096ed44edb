"""The resource server's sans-IO pieces (auth/_resource.py): the protected resource
metadata document and its paths (RFC 9728 sections 2, 3.1, 3.3), the Bearer challenges of
401, 403 and 400 (RFC 6750 section 3, RFC 9728 section 5.1) read back by the client's own
parser, reading the token from the Authorization header (RFC 6750 section 2.1) and refusing
it in the query (MCP: "Access tokens **MUST NOT** be included in the URI query string"), the
audience and scope claims, and the verdict cache bounded in entries and bytes."""

from __future__ import annotations

import pytest

from mcp_sansio.auth import AuthError, AuthUsageError, bearer_challenge
from mcp_sansio.auth._resource import (
    Decided,
    InvalidToken,
    Principal,
    ProtectedResource,
    VerdictCache,
    audience_matches,
    bearer_challenge_header,
    bearer_token,
    query_token,
    scope_list,
    scopes_of,
)

AS = "https://auth.example.com"


def _resource(**kw: object) -> ProtectedResource:
    return ProtectedResource("https://mcp.example.com/mcp", (AS,), **kw)  # type: ignore[arg-type]


# ---------------------------------------------------------------------- the document


def test_document_and_paths() -> None:
    pr = _resource(scopes_supported=("files:read", "files:write"), resource_name="Files")
    # RFC 9728 section 3.1: /.well-known/oauth-protected-resource inserted before the path
    assert pr.metadata_url == "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"
    # MCP 2025-11-25: the endpoint's path first, then the root
    assert pr.metadata_paths == (
        "/.well-known/oauth-protected-resource/mcp",
        "/.well-known/oauth-protected-resource",
    )
    doc = pr.document()
    # section 3.3: resource MUST be identical to the identifier the suffix was inserted into
    assert doc["resource"] == "https://mcp.example.com/mcp"
    assert doc["authorization_servers"] == [AS]
    assert doc["bearer_methods_supported"] == ["header"]
    assert doc["scopes_supported"] == ["files:read", "files:write"]
    assert doc["resource_name"] == "Files"
    assert "resource_documentation" not in doc
    assert pr.document_bytes().startswith(b"{")


def test_root_resource_has_one_path() -> None:
    pr = ProtectedResource("https://mcp.example.com/", (AS,))
    assert pr.metadata_url == "https://mcp.example.com/.well-known/oauth-protected-resource"
    assert pr.metadata_paths == ("/.well-known/oauth-protected-resource",)


def test_extra_members_do_not_override_required_ones() -> None:
    pr = _resource(extra={"resource": "https://evil.example", "jwks_uri": f"{AS}/jwks"})
    doc = pr.document()
    assert doc["resource"] == "https://mcp.example.com/mcp"
    assert doc["jwks_uri"] == f"{AS}/jwks"


def test_loopback_http_is_taken() -> None:
    pr = ProtectedResource("http://127.0.0.1:8000/mcp", (AS,))
    assert pr.metadata_url == "http://127.0.0.1:8000/.well-known/oauth-protected-resource/mcp"


@pytest.mark.parametrize(
    "resource", ["http://mcp.example.com/mcp", "https://mcp.example.com/mcp#x", "ftp://h/x"]
)
def test_bad_resource_identifier_is_refused(resource: str) -> None:
    # RFC 9728 section 2: "a URL that uses the https scheme and has no fragment component"
    with pytest.raises(AuthError):
        ProtectedResource(resource, (AS,))


def test_no_authorization_server_is_refused() -> None:
    # MCP 2025-06-18 and later: "MUST include the authorization_servers field containing
    # at least one authorization server"
    with pytest.raises(AuthUsageError):
        ProtectedResource("https://mcp.example.com/mcp", ())
    with pytest.raises(AuthUsageError):
        ProtectedResource("https://mcp.example.com/mcp", ("",))


@pytest.mark.parametrize("scope", ["", "a b", 'a"b', "a\\b", "caf\u00e9"])
def test_bad_scope_token_is_refused(scope: str) -> None:
    # RFC 6749 section 3.3: scope-token = 1*( %x21 / %x23-5B / %x5D-7E )
    with pytest.raises(AuthUsageError):
        _resource(required_scopes=(scope,))


# ---------------------------------------------------------------------- the answers


def test_401_without_token_has_no_error_and_names_scope() -> None:
    pr = _resource(scopes_supported=("a", "b"), required_scopes=("a",))
    status, headers = pr.unauthorized()
    assert status == 401
    ((name, value),) = headers
    assert name == "www-authenticate"
    parsed = bearer_challenge(value)  # the client's own parser reads it back
    assert parsed is not None
    assert parsed.resource_metadata == pr.metadata_url
    assert parsed.scope == "a"  # the required ones, not all supported
    assert parsed.error is None  # RFC 6750 section 3: SHOULD NOT include an error code


def test_401_scope_falls_back_to_supported_and_may_be_absent() -> None:
    value = _resource(scopes_supported=("x", "y")).unauthorized()[1][0][1]
    parsed = bearer_challenge(value)
    assert parsed is not None
    assert parsed.scope == "x y"
    value = _resource().unauthorized()[1][0][1]
    assert "scope=" not in value


def test_401_invalid_token() -> None:
    pr = _resource(required_scopes=("a",))
    status, headers = pr.unauthorized("invalid_token", 'the token "expired"\n')
    parsed = bearer_challenge(headers[0][1])
    assert status == 401
    assert parsed is not None
    assert parsed.error == "invalid_token"
    assert parsed.error_description is not None
    assert '"' not in parsed.error_description
    assert "\n" not in parsed.error_description


def test_403_insufficient_scope() -> None:
    pr = _resource(required_scopes=("a", "b"))
    status, headers = pr.forbidden(("a", "b", "a"))
    parsed = bearer_challenge(headers[0][1])
    assert status == 403
    assert parsed is not None
    assert parsed.error == "insufficient_scope"
    assert parsed.scope == "a b"  # each once
    assert parsed.resource_metadata == pr.metadata_url


def test_400_invalid_request() -> None:
    status, headers = _resource().bad_request("two tokens")
    parsed = bearer_challenge(headers[0][1])
    assert status == 400
    assert parsed is not None
    assert parsed.error == "invalid_request"


def test_challenge_header_quotes_safely() -> None:
    value = bearer_challenge_header("https://m/.well-known/x", ("s",), "e", 'a"b\\c\u00e9')
    parsed = bearer_challenge(value)
    assert parsed is not None
    assert parsed.error_description == "a?b?c?"
    assert value.count("error=") == 1  # RFC 6750 section 3: no attribute twice
    assert scope_list(["b", "a", "b"]) == "b a"


# ---------------------------------------------------------------------- the token


@pytest.mark.parametrize(
    ("header", "token"),
    [
        (None, None),
        ("Bearer abc.DEF-_~+/==", "abc.DEF-_~+/=="),
        ("bearer   tok  ", "tok"),
        ("Basic dXNlcjpwYXNz", None),  # another scheme: a 401 without error
        ("DPoP tok", None),
    ],
)
def test_bearer_token(header: str | None, token: str | None) -> None:
    assert bearer_token(header) == token


@pytest.mark.parametrize(
    "header",
    [
        "Bearer",
        "Bearer ",
        "Bearer a b",
        "Bearer a,Bearer b",
        "Basic x, Bearer y",
        "Bearer =",
        "Bearer a=b",
        'Bearer "tok"',
        "Bearer " + "a" * 16385,
    ],
)
def test_malformed_bearer_is_refused_without_quoting(header: str) -> None:
    with pytest.raises(ValueError, match=r"Authorization|Bearer|token") as info:
        bearer_token(header)
    body = header.partition(" ")[2].strip()
    if len(body) > 3:
        assert body not in str(info.value)


@pytest.mark.parametrize(
    ("target", "found"),
    [
        ("/mcp", False),
        ("/mcp?x=1", False),
        ("/mcp?access_token=abc", True),
        ("/mcp?a=1&access_token=", True),
        ("/mcp?access_token_x=1", False),
        ("https://h/mcp?access_token=abc", True),
    ],
)
def test_query_token(target: str, found: bool) -> None:
    assert query_token(target) is found


# ---------------------------------------------------------------------- claims


def test_audience_matches() -> None:
    r = "https://mcp.example.com/mcp"
    assert audience_matches(r, r)
    assert audience_matches(["other", "HTTPS://MCP.EXAMPLE.COM/mcp"], r)
    assert not audience_matches("https://mcp.example.com/other", r)
    assert not audience_matches(["https://mcp.example.com"], r)
    assert not audience_matches(None, r)  # MCP requires the audience present
    assert not audience_matches([1, None], r)
    assert not audience_matches({"aud": r}, r)
    assert audience_matches("https://mcp.example.com/", "https://mcp.example.com")


def test_scopes_of() -> None:
    assert scopes_of({"scope": "a  b"}) == frozenset({"a", "b"})
    assert scopes_of({"scp": ["a", "b"]}) == frozenset({"a", "b"})
    assert scopes_of({"scp": "a b"}) == frozenset({"a", "b"})
    assert scopes_of({}) == frozenset()
    assert scopes_of({"scope": ["a"]}) is None
    assert scopes_of({"scp": [1]}) is None


def test_principal_key_and_repr() -> None:
    a = Principal("alice", "c1", frozenset({"x"}), issuer=AS, claims={"secret": "claims"})
    b = Principal("alice", "c2", issuer=AS)
    assert a.key != b.key
    assert a.key == Principal("alice", "c1", issuer=AS).key
    assert "claims" not in repr(a)


def test_decided() -> None:
    step = Decided(InvalidToken("expired"))
    assert step.next_step() == InvalidToken("expired")
    with pytest.raises(AuthUsageError):
        step.receive_response(200, (), b"", now=0.0)


# ---------------------------------------------------------------------- the cache


def _p(n: int, exp: float | None = None, blob: str = "") -> Principal:
    return Principal(f"u{n}", expires_at=exp, claims={"sub": f"u{n}", "blob": blob})


def test_cache_reuses_until_expiry_and_ttl() -> None:
    cache = VerdictCache(ttl=60.0, negative_ttl=5.0)
    cache.put("t1", _p(1, exp=130.0), now=100.0)
    assert cache.get("t1", 129.0) == _p(1, exp=130.0)
    assert cache.get("t1", 130.0) is None  # its exp
    assert len(cache) == 0
    assert cache.bytes == 0
    cache.put("t2", _p(2), now=100.0)
    assert cache.get("t2", 159.0) is not None
    assert cache.get("t2", 160.0) is None  # the ttl
    cache.put("t3", InvalidToken("bad"), now=100.0)
    assert cache.get("t3", 104.0) == InvalidToken("bad")
    assert cache.get("t3", 105.0) is None
    cache.put("t4", _p(4, exp=50.0), now=100.0)  # already expired: not kept
    assert cache.get("t4", 100.0) is None
    assert len(cache) == 0


def test_cache_bounded_in_entries() -> None:
    cache = VerdictCache(max_entries=3)
    for n in range(5):
        cache.put(f"t{n}", _p(n), now=0.0)
    assert len(cache) == 3
    assert cache.get("t0", 1.0) is None
    assert cache.get("t1", 1.0) is None
    assert cache.get("t4", 1.0) == _p(4)


def test_cache_bounded_in_bytes() -> None:
    cache = VerdictCache(max_bytes=2000)
    for n in range(10):
        cache.put(f"t{n}", _p(n, blob="x" * 400), now=0.0)
        assert cache.bytes <= 2000
    assert 0 < len(cache) < 10
    assert cache.get("t9", 1.0) is not None
    assert cache.get("t0", 1.0) is None
    cache.put("huge", _p(99, blob="x" * 5000), now=0.0)  # larger than the bound: not kept
    assert cache.get("huge", 1.0) is None
    before = cache.bytes
    cache.put("t9", _p(9, blob="x" * 400), now=0.0)  # replaced, not counted twice
    assert cache.bytes == before


def test_cache_never_keeps_the_token() -> None:
    cache = VerdictCache()
    token = "eyJhbGciOiJSUzI1NiJ9.secret-token-value.sig"
    cache.put(token, _p(1), now=0.0)
    assert token not in repr(cache._items)
    assert cache.get(token, 1.0) is not None
    assert cache.get(token + "x", 1.0) is None
    assert VerdictCache(max_entries=0).get(token, 0.0) is None
