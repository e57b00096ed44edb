"""The auth core's pure parts: URLs, metadata checks, PKCE, requests and response parsers."""

from __future__ import annotations

import base64
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import pytest

from mcp_sansio.auth import (
    PROFILES,
    AuthMethod,
    AuthorizationDeniedError,
    AuthorizationResponseError,
    AuthUsageError,
    ClientInfo,
    InsecureEndpointError,
    IssuerMismatchError,
    IssuerResponseMismatchError,
    MetadataCandidate,
    Pkce,
    PkceUnsupportedError,
    ResourceMetadataError,
    ResourceMismatchError,
    StateMismatchError,
    TokenErrorResponse,
    TokenResponseError,
    authorization_url,
    check_endpoint,
    code_grant,
    is_loopback,
    parse_authorization_response,
    parse_resource_metadata,
    parse_server_metadata,
    parse_token_response,
    refresh_grant,
    resource_metadata_candidates,
    server_metadata_candidates,
    token_request,
)

AS: dict[str, Any] = {
    "issuer": "https://auth.example.com",
    "authorization_endpoint": "https://auth.example.com/authorize",
    "token_endpoint": "https://auth.example.com/token",
    "code_challenge_methods_supported": ["S256"],
}


# -- URLs ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "host", ["localhost", "127.0.0.1", "127.5.6.7", "[::1]", "app.localhost", "LOCALHOST"]
)
def test_loopback_http_allowed(host: str) -> None:
    assert is_loopback(host.strip("[]"))
    url = f"http://{host}:8000/cb"
    assert check_endpoint(url, "x", "usage") == url


@pytest.mark.parametrize(
    "url",
    [
        "http://auth.example.com/token",
        "http://10.0.0.1/token",
        "ftp://localhost/x",
        "http://localhost.evil.com/",
    ],
)
def test_insecure_refused(url: str) -> None:
    with pytest.raises(InsecureEndpointError) as info:
        check_endpoint(url, "the token_endpoint", "server metadata")
    assert info.value.step == "server metadata"


def test_fragment_refused() -> None:
    with pytest.raises(Exception, match="fragment"):
        check_endpoint("https://a.example/x#y", "x", "usage")


def test_resource_metadata_candidates() -> None:
    got = resource_metadata_candidates("https://example.com/public/mcp", None)
    assert [c.url for c in got] == [
        "https://example.com/.well-known/oauth-protected-resource/public/mcp",
        "https://example.com/.well-known/oauth-protected-resource",
    ]
    assert got[0].expected == "https://example.com/public/mcp"
    assert got[1].expected == "https://example.com"
    assert got[1].also == "https://example.com/public/mcp"
    # a server at the root: the root URI alone ("Not applicable if the MCP server is at the root")
    assert [c.url for c in resource_metadata_candidates("https://example.com", None)] == [
        "https://example.com/.well-known/oauth-protected-resource"
    ]
    header = resource_metadata_candidates("https://example.com/mcp", "https://m.example/prm")
    assert header == [MetadataCandidate("https://m.example/prm", "https://example.com/mcp")]
    with pytest.raises(InsecureEndpointError):
        resource_metadata_candidates("https://example.com/mcp", "http://m.example/prm")


def test_trailing_slashes_of_well_known_uris() -> None:
    # RFC 9728 3.1: only the slash after the host goes; a resource's path keeps its own
    got = resource_metadata_candidates("https://e.com/mcp/", None)[0].url
    assert got == "https://e.com/.well-known/oauth-protected-resource/mcp/"
    # RFC 8414 3.1: an issuer's terminating "/" goes
    urls = [c.url for c in server_metadata_candidates("https://a.com/t1/", PROFILES["2026-07-28"])]
    assert urls == [
        "https://a.com/.well-known/oauth-authorization-server/t1",
        "https://a.com/.well-known/openid-configuration/t1",
        "https://a.com/t1/.well-known/openid-configuration",
    ]


def test_server_metadata_candidates_per_version() -> None:
    issuer = "https://auth.example.com/tenant1"
    urls = {v: [c.url for c in server_metadata_candidates(issuer, p)] for v, p in PROFILES.items()}
    oauth = "https://auth.example.com/.well-known/oauth-authorization-server"
    assert urls["2025-03-26"] == [oauth]  # the authorization base URL: the path discarded
    assert urls["2025-06-18"] == [f"{oauth}/tenant1"]  # RFC 8414 section 3.1 alone
    three = [
        f"{oauth}/tenant1",
        "https://auth.example.com/.well-known/openid-configuration/tenant1",
        "https://auth.example.com/tenant1/.well-known/openid-configuration",
    ]
    assert urls["2025-11-25"] == urls["2026-07-28"] == three
    root = [
        c.url
        for c in server_metadata_candidates("https://auth.example.com", PROFILES["2026-07-28"])
    ]
    assert root == [oauth, "https://auth.example.com/.well-known/openid-configuration"]


# -- metadata documents ------------------------------------------------------------------


def test_resource_metadata_checked() -> None:
    cand = MetadataCandidate(
        "https://e.com/.well-known/oauth-protected-resource/mcp", "https://e.com/mcp"
    )
    doc = {
        "resource": "HTTPS://E.COM/mcp",
        "authorization_servers": ["https://a.com"],
        "scopes_supported": ["r"],
    }
    meta = parse_resource_metadata(doc, cand)
    assert meta.authorization_servers == ("https://a.com",)
    assert meta.scopes_supported == ("r",)
    with pytest.raises(ResourceMismatchError, match=r"RFC 9728 section 3\.3"):
        parse_resource_metadata({**doc, "resource": "https://e.com/other"}, cand)
    with pytest.raises(ResourceMetadataError, match="no 'resource'"):
        parse_resource_metadata({"authorization_servers": ["https://a.com"]}, cand)
    with pytest.raises(ResourceMetadataError, match="authorization_servers"):
        parse_resource_metadata({**doc, "authorization_servers": []}, cand)
    with pytest.raises(ResourceMetadataError, match="list of strings"):
        parse_resource_metadata({**doc, "scopes_supported": "r"}, cand)
    with pytest.raises(ResourceMetadataError, match="JSON object"):
        parse_resource_metadata([doc], cand)


def test_root_resource_metadata_may_name_origin_or_endpoint() -> None:
    (cand,) = resource_metadata_candidates("https://e.com/mcp", None)[1:]
    for resource in ("https://e.com", "https://e.com/", "https://e.com/mcp"):
        parse_resource_metadata(
            {"resource": resource, "authorization_servers": ["https://a"]}, cand
        )
    with pytest.raises(ResourceMismatchError):
        parse_resource_metadata(
            {"resource": "https://f.com", "authorization_servers": ["https://a"]}, cand
        )


def test_server_metadata_issuer_checked() -> None:
    profile = PROFILES["2026-07-28"]
    cand = MetadataCandidate(
        "https://auth.example.com/.well-known/oauth-authorization-server",
        "https://auth.example.com",
    )
    assert parse_server_metadata(AS, cand, profile).token_endpoint == AS["token_endpoint"]
    # MCP 2026-07-28's example: a document naming another issuer MUST be rejected
    for issuer in (
        "https://honest.example",
        "https://auth.example.com/",
        "HTTPS://auth.example.com",
    ):
        with pytest.raises(IssuerMismatchError) as info:
            parse_server_metadata({**AS, "issuer": issuer}, cand, profile)
        assert info.value.step == "server metadata"


def test_server_metadata_endpoints_must_be_https() -> None:
    cand = MetadataCandidate("https://x/.well-known/oauth-authorization-server", AS["issuer"])
    with pytest.raises(InsecureEndpointError, match="token_endpoint"):
        parse_server_metadata(
            {**AS, "token_endpoint": "http://auth.example.com/token"}, cand, PROFILES["2025-06-18"]
        )


def test_pkce_support_per_version() -> None:
    cand = MetadataCandidate("https://x/", AS["issuer"])
    absent = {k: v for k, v in AS.items() if k != "code_challenge_methods_supported"}
    for version in ("2025-11-25", "2026-07-28"):
        with pytest.raises(PkceUnsupportedError, match="MUST refuse"):
            parse_server_metadata(absent, cand, PROFILES[version])
    # 2025-06-18 asks only that clients implement PKCE: an absent list is not refused
    assert (
        parse_server_metadata(absent, cand, PROFILES["2025-06-18"]).code_challenge_methods_supported
        is None
    )
    for version in PROFILES:
        with pytest.raises(PkceUnsupportedError, match="without S256"):
            parse_server_metadata(
                {**AS, "code_challenge_methods_supported": ["plain"]}, cand, PROFILES[version]
            )


# -- PKCE and the requests ------------------------------------------------------------------


def test_pkce_rfc7636_appendix_b() -> None:
    pkce = Pkce.make("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk")
    assert pkce.challenge == "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
    assert "dBjft" not in repr(pkce)
    fresh = Pkce.make()
    assert len(fresh.verifier) == 43
    assert fresh.verifier != Pkce.make().verifier
    for bad in ("short", "x" * 129, "a" * 42 + "!"):
        with pytest.raises(AuthUsageError):
            Pkce.make(bad)


def test_authorization_url() -> None:
    pkce = Pkce.make("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk")
    url = authorization_url(
        "https://auth.example.com/authorize?tenant=1",
        client_id="c 1",
        redirect_uri="http://127.0.0.1:3000/cb",
        state="st",
        pkce=pkce,
        resource="https://mcp.example.com",
        scope="files:read files:write",
    )
    parts = urlsplit(url)
    assert parts.path == "/authorize"
    assert parse_qsl(parts.query) == [
        ("tenant", "1"),
        ("response_type", "code"),
        ("client_id", "c 1"),
        ("redirect_uri", "http://127.0.0.1:3000/cb"),
        ("state", "st"),
        ("code_challenge", pkce.challenge),
        ("code_challenge_method", "S256"),
        ("resource", "https://mcp.example.com"),
        ("scope", "files:read files:write"),
    ]
    assert "resource=https%3A%2F%2Fmcp.example.com" in url  # the spec's own example
    no_scope = authorization_url(
        "https://a/authorize",
        client_id="c",
        redirect_uri="https://r/cb",
        state="s",
        pkce=pkce,
        resource="https://m",
        scope=None,
    )
    assert "scope=" not in no_scope


@pytest.mark.parametrize("method", ["client_secret_basic", "client_secret_post", "none"])
def test_token_request_client_authentication(method: AuthMethod) -> None:
    client = ClientInfo("id:1", "s&cret" if method != "none" else None)
    req = token_request(
        "https://a/token",
        code_grant("CODE", "https://r/cb", "VER"),
        client=client,
        method=method,
        resource="https://m",
    )
    assert req.method == "POST"
    form = dict(parse_qsl(req.body.decode()))
    headers = dict(req.headers)
    assert headers["Content-Type"] == "application/x-www-form-urlencoded"
    assert form["grant_type"] == "authorization_code"
    assert form["code_verifier"] == "VER"
    assert form["resource"] == "https://m"
    assert form["redirect_uri"] == "https://r/cb"
    if method == "client_secret_basic":
        scheme, creds = headers["Authorization"].split(" ")
        assert scheme == "Basic"
        # RFC 6749 2.3.1: form-encoded before base64
        assert base64.b64decode(creds).decode() == "id%3A1:s%26cret"
        assert "client_id" not in form
        assert "client_secret" not in form
    else:
        assert "Authorization" not in headers
        assert form["client_id"] == "id:1"
        assert ("client_secret" in form) == (method == "client_secret_post")
    assert "CODE" not in repr(req)
    assert "Authorization" not in headers or headers["Authorization"] not in repr(req)
    assert "cret" not in repr(client)


def test_refresh_grant_and_method_choice() -> None:
    assert refresh_grant("R") == {"grant_type": "refresh_token", "refresh_token": "R"}
    assert ClientInfo("c").method_for(None) == "none"
    assert ClientInfo("c", "s").method_for(None) == "client_secret_basic"
    assert ClientInfo("c", "s").method_for(("client_secret_post",)) == "client_secret_post"
    both = ("client_secret_post", "client_secret_basic")
    assert ClientInfo("c", "s").method_for(both) == "client_secret_basic"
    assert ClientInfo("c", "s").method_for(("none",)) == "none"
    assert ClientInfo("c", "s").method_for(("private_key_jwt",)) == "client_secret_basic"
    assert ClientInfo("c").method_for(("client_secret_basic",)) == "none"
    registered = ClientInfo("c", "s", auth_method="client_secret_post")
    assert registered.method_for(("client_secret_basic",)) == "client_secret_post"
    with pytest.raises(AuthUsageError):
        ClientInfo("c", auth_method="client_secret_post").method_for(None)


# -- the answers ---------------------------------------------------------------------------

REDIRECT = "http://127.0.0.1:3000/cb"
ISSUER = "https://auth.example.com"


def _auth(query: str, *, iss_supported: bool = False) -> str:
    return parse_authorization_response(
        f"{REDIRECT}?{query}",
        redirect_uri=REDIRECT,
        state="S1",
        issuer=ISSUER,
        iss_supported=iss_supported,
    ).code


def test_authorization_response() -> None:
    assert _auth("code=C&state=S1") == "C"
    assert _auth(f"code=C&state=S1&iss={ISSUER}", iss_supported=True) == "C"
    assert _auth("code=C&state=S1&iss=https%3A%2F%2Fauth.example.com") == "C"


@pytest.mark.parametrize(
    ("query", "supported", "error"),
    [
        ("code=C", False, StateMismatchError),
        ("code=C&state=S2", False, StateMismatchError),
        ("code=C&state=S1&state=S1", False, AuthorizationResponseError),
        ("code=C&state=S1", True, IssuerResponseMismatchError),  # advertised, absent: reject
        ("code=C&state=S1&iss=https://evil.example", False, IssuerResponseMismatchError),
        ("code=C&state=S1&iss=https://evil.example", True, IssuerResponseMismatchError),
        ("code=C&state=S1&iss=https://AUTH.example.com", False, IssuerResponseMismatchError),
        ("code=C&state=S1&iss=https://auth.example.com/", False, IssuerResponseMismatchError),
        ("state=S1", False, AuthorizationResponseError),
        ("error=access_denied&error_description=no&state=S1", False, AuthorizationDeniedError),
    ],
)
def test_authorization_response_refused(
    query: str, supported: bool, error: type[Exception]
) -> None:
    with pytest.raises(error) as info:
        _auth(query, iss_supported=supported)
    assert type(info.value) is error
    assert "C&" not in str(info.value)


def test_error_with_wrong_iss_is_not_acted_on() -> None:
    # MCP 2026-07-28: "on mismatch the client MUST NOT act on or display error"
    with pytest.raises(IssuerResponseMismatchError) as info:
        _auth("error=access_denied&error_description=SECRETTEXT&state=S1&iss=https://evil")
    assert "SECRETTEXT" not in str(info.value)


def test_redirect_elsewhere_refused() -> None:
    with pytest.raises(AuthorizationResponseError, match="not to the redirect_uri"):
        parse_authorization_response(
            "http://127.0.0.1:3001/cb?code=C&state=S1",
            redirect_uri=REDIRECT,
            state="S1",
            issuer=ISSUER,
            iss_supported=False,
        )


def test_token_response() -> None:
    body = (
        b'{"access_token":"AT","token_type":"bearer","expires_in":3600,'
        b'"refresh_token":"RT","scope":"a b"}'
    )
    tokens = parse_token_response(200, body, now=100.0)
    assert (tokens.access_token, tokens.refresh_token, tokens.scope) == ("AT", "RT", "a b")
    assert tokens.expires_at() == 3700.0
    assert not tokens.expired(3699.0)
    assert tokens.expired(3700.0)
    assert tokens.authorization() == ("Authorization", "Bearer AT")
    assert "AT" not in repr(tokens)
    assert "RT" not in repr(tokens)


@pytest.mark.parametrize(
    "body",
    [
        b"not json",
        b"[]",
        b'{"token_type":"Bearer"}',
        b'{"access_token":"AT"}',
        b'{"access_token":"AT","token_type":"DPoP"}',
        b'{"access_token":"AT","token_type":"Bearer","expires_in":"3600"}',
        b'{"access_token":"AT","token_type":"Bearer","expires_in":true}',
        b'{"access_token":"AT","token_type":"Bearer","refresh_token":5}',
    ],
)
def test_token_response_refused(body: bytes) -> None:
    with pytest.raises(TokenResponseError) as info:
        parse_token_response(200, body)
    assert info.value.step == "token request"
    assert "AT" not in str(info.value)


def test_token_types() -> None:
    # RFC 9449 section 5: a DPoP-bound token answers token_type DPoP; taken only when asked
    body = b'{"access_token":"AT","token_type":"dpop"}'
    with pytest.raises(TokenResponseError, match="not one this client takes"):
        parse_token_response(200, body)
    tokens = parse_token_response(200, body, token_types=("Bearer", "DPoP"))
    assert tokens.token_type == "dpop"
    assert tokens.authorization() == ("Authorization", "DPoP AT")  # RFC 9449 section 7.1
    bearer = parse_token_response(200, b'{"access_token":"AT","token_type":"BEARER"}')
    assert bearer.token_type == "Bearer"
    with pytest.raises(TokenResponseError):
        parse_token_response(
            200, b'{"access_token":"AT","token_type":"Bearer"}', token_types=("dpop",)
        )


def test_token_error_response() -> None:
    with pytest.raises(TokenErrorResponse) as info:
        parse_token_response(400, b'{"error":"invalid_grant","error_description":"expired\\ncode"}')
    assert (info.value.status, info.value.error) == (400, "invalid_grant")
    assert info.value.description == "expired?code"
    with pytest.raises(TokenResponseError, match="500 without an error"):
        parse_token_response(500, b'{"access_token":"AT"}')
