"""The authorization flow driven by scripted HTTP responses, in each version's discovery
order, and its refusals."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

import orjson
import pytest

from mcp_sansio.auth import (
    AuthError,
    AuthFlow,
    Authorized,
    AuthUsageError,
    ClientBindingError,
    ClientInfo,
    HttpRequest,
    InsecureEndpointError,
    IssuerMismatchError,
    IssuerResponseMismatchError,
    MemoryTokenStore,
    OpenUrl,
    PkceUnsupportedError,
    ResourceMetadataError,
    ResourceMismatchError,
    ServerMetadataError,
    StateMismatchError,
    TokenErrorResponse,
    TokenKey,
    TokenResponseError,
    Tokens,
)

REDIRECT = "http://127.0.0.1:33418/callback"
MCP = "https://mcp.example.com/mcp"
PRM_PATH = "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"
PRM_ROOT = "https://mcp.example.com/.well-known/oauth-protected-resource"
ISSUER = "https://auth.example.com/tenant1"
VERIFIER = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
CHALLENGE = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"

Answer = tuple[int, Any] | Callable[[HttpRequest], tuple[int, Any]]


def as_doc(issuer: str = ISSUER, **extra: Any) -> dict[str, Any]:
    return {
        "issuer": issuer,
        "authorization_endpoint": f"{issuer}/authorize",
        "token_endpoint": f"{issuer}/token",
        "code_challenge_methods_supported": ["S256"],
        **extra,
    }


def prm_doc(resource: str = MCP, **extra: Any) -> dict[str, Any]:
    return {"resource": resource, "authorization_servers": [ISSUER], **extra}


def token_endpoint(expect: Mapping[str, str], answer: Any = None) -> Answer:
    def handle(req: HttpRequest) -> tuple[int, Any]:
        assert req.method == "POST"
        form = dict(parse_qsl(req.body.decode()))
        for name, value in expect.items():
            assert form.get(name) == value, name
        return 200, answer or {
            "access_token": "AT",
            "token_type": "Bearer",
            "expires_in": 60,
            "refresh_token": "RT",
        }

    return handle


def person(
    flow: AuthFlow, extra: Mapping[str, str] | None = None, state: str | None = None
) -> Callable[[str], str]:
    """The browser and the authorization server's consent page: redirect with a code."""

    def act(url: str) -> str:
        query = dict(parse_qsl(urlsplit(url).query))
        out = {
            "code": "CODE",
            "state": state if state is not None else query["state"],
            **(extra or {}),
        }
        return f"{query['redirect_uri']}?{urlencode(out)}"

    return act


def drive(
    flow: AuthFlow, routes: Mapping[str, Answer], redirect: Callable[[str], str] | None = None
) -> tuple[Authorized, list[str], list[str]]:
    """Run the flow to its end: the requests made (method and URL) and the URLs opened."""
    made: list[str] = []
    opened: list[str] = []
    for _ in range(20):
        step = flow.next_step()
        if isinstance(step, Authorized):
            return step, made, opened
        if isinstance(step, OpenUrl):
            opened.append(step.url)
            flow.receive_redirect((redirect or person(flow))(step.url))
            continue
        made.append(f"{step.method} {step.url}")
        answer = routes.get(step.url, (404, {"error": "not_found"}))
        status, body = answer(step) if callable(answer) else answer
        flow.receive_response(
            status, [("content-type", "application/json")], orjson.dumps(body), now=1000.0
        )
    raise AssertionError("the flow did not end")


def new_flow(version: str, header: str | None = None, **kw: Any) -> AuthFlow:
    kw.setdefault("client", ClientInfo("client-1"))
    return AuthFlow(
        MCP,
        version=version,
        redirect_uri=REDIRECT,
        www_authenticate=header,
        code_verifier=VERIFIER,
        **kw,
    )


def test_2026_header_url_then_oidc_path_appending() -> None:
    header = 'Bearer resource_metadata="https://mcp.example.com/prm", scope="files:read"'
    flow = new_flow("2026-07-28", header, state="STATE")
    routes: dict[str, Answer] = {
        "https://mcp.example.com/prm": (200, prm_doc(scopes_supported=["everything"])),
        "https://auth.example.com/tenant1/.well-known/openid-configuration": (
            200,
            as_doc(authorization_response_iss_parameter_supported=True),
        ),
        f"{ISSUER}/token": token_endpoint(
            {
                "grant_type": "authorization_code",
                "code": "CODE",
                "code_verifier": VERIFIER,
                "resource": MCP,
                "client_id": "client-1",
                "redirect_uri": REDIRECT,
            }
        ),
    }
    done, made, opened = drive(flow, routes, person(flow, {"iss": ISSUER}))
    assert made == [
        "GET https://mcp.example.com/prm",
        "GET https://auth.example.com/.well-known/oauth-authorization-server/tenant1",
        "GET https://auth.example.com/.well-known/openid-configuration/tenant1",
        "GET https://auth.example.com/tenant1/.well-known/openid-configuration",
        f"POST {ISSUER}/token",
    ]
    (url,) = opened
    query = dict(parse_qsl(urlsplit(url).query))
    assert url.startswith(f"{ISSUER}/authorize?")
    assert query == {
        "response_type": "code",
        "client_id": "client-1",
        "redirect_uri": REDIRECT,
        "state": "STATE",
        "code_challenge": CHALLENGE,
        "code_challenge_method": "S256",
        "resource": MCP,
        "scope": "files:read",  # the challenge's, not scopes_supported
    }
    assert done.key == TokenKey(ISSUER, MCP)
    assert done.tokens.access_token == "AT"
    assert done.tokens.obtained_at == 1000.0
    assert flow.store.load(done.key) == done.tokens
    assert flow.phase == "done"
    assert flow.next_step() == done


def test_2025_11_25_well_known_fallback_and_scopes_supported() -> None:
    flow = new_flow("2025-11-25", 'Bearer realm="mcp"')
    routes: dict[str, Answer] = {
        PRM_ROOT: (200, prm_doc(scopes_supported=["a", "b"])),
        "https://auth.example.com/.well-known/oauth-authorization-server/tenant1": (200, as_doc()),
        f"{ISSUER}/token": token_endpoint({"resource": MCP}),
    }
    _, made, opened = drive(flow, routes)
    assert made[:3] == [
        f"GET {PRM_PATH}",
        f"GET {PRM_ROOT}",
        "GET https://auth.example.com/.well-known/oauth-authorization-server/tenant1",
    ]
    assert dict(parse_qsl(urlsplit(opened[0]).query))["scope"] == "a b"


def test_2025_06_18_rfc8414_only_and_no_scope() -> None:
    flow = new_flow("2025-06-18")
    doc = as_doc()
    del doc["code_challenge_methods_supported"]  # not refused in 2025-06-18
    routes: dict[str, Answer] = {
        PRM_PATH: (200, prm_doc()),
        "https://auth.example.com/.well-known/oauth-authorization-server/tenant1": (200, doc),
        f"{ISSUER}/token": token_endpoint({"resource": MCP}),
    }
    _, made, opened = drive(flow, routes)
    assert made == [
        f"GET {PRM_PATH}",
        "GET https://auth.example.com/.well-known/oauth-authorization-server/tenant1",
        f"POST {ISSUER}/token",
    ]
    assert "scope" not in dict(parse_qsl(urlsplit(opened[0]).query))


def test_2025_06_18_no_openid_fallback() -> None:
    flow = new_flow("2025-06-18")
    routes: dict[str, Answer] = {
        PRM_PATH: (200, prm_doc()),
        "https://auth.example.com/tenant1/.well-known/openid-configuration": (200, as_doc()),
    }
    with pytest.raises(ServerMetadataError, match="no authorization server metadata"):
        drive(flow, routes)


def test_2025_03_26_default_endpoints() -> None:
    flow = new_flow("2025-03-26", 'Bearer scope="x"')
    routes: dict[str, Answer] = {"https://mcp.example.com/token": token_endpoint({"resource": MCP})}
    requests: list[HttpRequest] = []
    first = flow.next_step()
    assert isinstance(first, HttpRequest)
    requests.append(first)
    assert first.url == "https://mcp.example.com/.well-known/oauth-authorization-server"
    assert ("MCP-Protocol-Version", "2025-03-26") in first.headers
    done, made, opened = drive(flow, routes)
    assert made == [f"GET {first.url}", "POST https://mcp.example.com/token"]
    assert opened[0].startswith("https://mcp.example.com/authorize?")
    assert dict(parse_qsl(urlsplit(opened[0]).query))["scope"] == "x"
    assert done.key == TokenKey("https://mcp.example.com", MCP)
    assert flow.server_metadata is not None
    assert flow.server_metadata.defaults


def test_2025_03_26_metadata_at_root() -> None:
    flow = new_flow("2025-03-26")
    base = "https://mcp.example.com"
    routes: dict[str, Answer] = {
        f"{base}/.well-known/oauth-authorization-server": (
            200,
            as_doc(base, token_endpoint="https://t.example.com/tok"),
        ),
        "https://t.example.com/tok": token_endpoint({}),
    }
    _, made, _ = drive(flow, routes)
    assert made[-1] == "POST https://t.example.com/tok"


def test_2025_03_26_other_failure_is_not_a_fallback() -> None:
    flow = new_flow("2025-03-26")
    drive_error(
        flow,
        {"https://mcp.example.com/.well-known/oauth-authorization-server": (500, {})},
        ServerMetadataError,
    )


def drive_error(
    flow: AuthFlow,
    routes: Mapping[str, Answer],
    error: type[AuthError],
    redirect: Callable[[str], str] | None = None,
) -> AuthError:
    with pytest.raises(error) as info:
        drive(flow, routes, redirect)
    assert type(info.value) is error
    assert flow.phase == "failed"
    with pytest.raises(AuthUsageError):
        flow.next_step()
    for secret in ("AT", "RT", "CODE", VERIFIER, "s3cret"):
        assert secret not in str(info.value)
    return info.value


def good_routes(**override: Answer) -> dict[str, Answer]:
    routes: dict[str, Answer] = {
        PRM_PATH: (200, prm_doc()),
        "https://auth.example.com/.well-known/oauth-authorization-server/tenant1": (200, as_doc()),
        f"{ISSUER}/token": token_endpoint({}),
    }
    routes.update(override)
    return routes


def test_refusal_wrong_issuer() -> None:
    routes = good_routes(
        **{
            "https://auth.example.com/.well-known/oauth-authorization-server/tenant1": (
                200,
                as_doc("https://evil.example.com"),
            )
        }
    )
    err = drive_error(new_flow("2026-07-28"), routes, IssuerMismatchError)
    assert err.step == "server metadata"


def test_refusal_missing_pkce_support() -> None:
    doc = as_doc()
    del doc["code_challenge_methods_supported"]
    routes = good_routes(
        **{"https://auth.example.com/.well-known/oauth-authorization-server/tenant1": (200, doc)}
    )
    drive_error(new_flow("2025-11-25"), routes, PkceUnsupportedError)


def test_refusal_wrong_resource() -> None:
    drive_error(
        new_flow("2026-07-28"),
        good_routes(**{PRM_PATH: (200, prm_doc("https://other.example.com/mcp"))}),
        ResourceMismatchError,
    )


def test_refusal_wrong_state() -> None:
    flow = new_flow("2026-07-28")
    drive_error(flow, good_routes(), StateMismatchError, person(flow, state="forged"))


def test_refusal_wrong_iss() -> None:
    flow = new_flow("2026-07-28")
    drive_error(
        flow,
        good_routes(),
        IssuerResponseMismatchError,
        person(flow, {"iss": "https://evil.example.com"}),
    )


def test_refusal_missing_iss_when_advertised() -> None:
    flow = new_flow("2026-07-28")
    routes = good_routes(
        **{
            "https://auth.example.com/.well-known/oauth-authorization-server/tenant1": (
                200,
                as_doc(authorization_response_iss_parameter_supported=True),
            )
        }
    )
    drive_error(flow, routes, IssuerResponseMismatchError)


def test_refusal_non_https_endpoints() -> None:
    routes = good_routes(
        **{
            "https://auth.example.com/.well-known/oauth-authorization-server/tenant1": (
                200,
                as_doc(authorization_endpoint="http://auth.example.com/authorize"),
            )
        }
    )
    drive_error(new_flow("2026-07-28"), routes, InsecureEndpointError)
    routes = good_routes(
        **{PRM_PATH: (200, {**prm_doc(), "authorization_servers": ["http://auth.example.com"]})}
    )
    drive_error(new_flow("2026-07-28"), routes, InsecureEndpointError)
    with pytest.raises(InsecureEndpointError):
        AuthFlow(
            MCP,
            version="2026-07-28",
            client=ClientInfo("c"),
            redirect_uri="http://app.example.com/cb",
        )
    with pytest.raises(InsecureEndpointError):
        new_flow("2026-07-28", 'Bearer resource_metadata="http://mcp.example.com/prm"')
    with pytest.raises(InsecureEndpointError):
        AuthFlow(
            "http://mcp.example.com/mcp",
            version="2026-07-28",
            client=ClientInfo("c"),
            redirect_uri=REDIRECT,
        )


def test_loopback_server_over_http() -> None:
    flow = AuthFlow(
        "http://127.0.0.1:8000/mcp",
        version="2026-07-28",
        client=ClientInfo("c"),
        redirect_uri=REDIRECT,
    )
    step = flow.next_step()
    assert isinstance(step, HttpRequest)
    assert step.url == "http://127.0.0.1:8000/.well-known/oauth-protected-resource/mcp"


def test_header_url_does_not_fall_back() -> None:
    flow = new_flow("2025-11-25", 'Bearer resource_metadata="https://mcp.example.com/prm"')
    err = drive_error(flow, good_routes(), ResourceMetadataError)
    assert "resource_metadata URL" in err.reason


def test_no_resource_metadata_anywhere() -> None:
    drive_error(new_flow("2026-07-28"), {}, ResourceMetadataError)


def test_server_error_stops_discovery() -> None:
    drive_error(new_flow("2026-07-28"), {PRM_PATH: (503, {})}, ResourceMetadataError)


def test_token_error_is_reported() -> None:
    routes = good_routes(
        **{f"{ISSUER}/token": (400, {"error": "invalid_grant", "error_description": "code used"})}
    )
    err = drive_error(new_flow("2026-07-28"), routes, TokenErrorResponse)
    assert "invalid_grant" in str(err)
    assert err.step == "token request"


def test_client_secret_basic_in_flow() -> None:
    routes = good_routes(
        **{
            "https://auth.example.com/.well-known/oauth-authorization-server/tenant1": (
                200,
                as_doc(token_endpoint_auth_methods_supported=["client_secret_basic"]),
            )
        }
    )
    seen: list[HttpRequest] = []

    def tok(req: HttpRequest) -> tuple[int, Any]:
        seen.append(req)
        return 200, {"access_token": "AT", "token_type": "Bearer"}

    routes[f"{ISSUER}/token"] = tok
    drive(new_flow("2026-07-28", client=ClientInfo("c", "s3cret")), routes)
    assert dict(seen[0].headers)["Authorization"].startswith("Basic ")
    assert b"s3cret" not in seen[0].body


def test_refresh_from_store_skips_the_person() -> None:
    store = MemoryTokenStore()
    key = TokenKey(ISSUER, MCP)
    store.save(key, Tokens("OLD", refresh_token="RT0"))
    routes = good_routes(
        **{
            f"{ISSUER}/token": token_endpoint(
                {"grant_type": "refresh_token", "refresh_token": "RT0", "resource": MCP},
                {"access_token": "NEW", "token_type": "Bearer"},
            )
        }
    )
    done, _made, opened = drive(new_flow("2026-07-28", store=store), routes)
    assert opened == []
    assert done.tokens.access_token == "NEW"
    assert done.tokens.refresh_token == "RT0"  # RFC 6749 section 6: kept when none is issued
    assert store.load(key) == done.tokens


def test_refresh_invalid_grant_asks_the_person() -> None:
    store = MemoryTokenStore()
    store.save(TokenKey(ISSUER, MCP), Tokens("OLD", refresh_token="RT0"))
    calls: list[str] = []

    def tok(req: HttpRequest) -> tuple[int, Any]:
        form = dict(parse_qsl(req.body.decode()))
        calls.append(form["grant_type"])
        if form["grant_type"] == "refresh_token":
            return 400, {"error": "invalid_grant"}
        return 200, {"access_token": "AT", "token_type": "Bearer"}

    done, _, opened = drive(
        new_flow("2026-07-28", store=store), good_routes(**{f"{ISSUER}/token": tok})
    )
    assert calls == ["refresh_token", "authorization_code"]
    assert len(opened) == 1
    assert done.tokens.access_token == "AT"


def test_tokens_kept_per_issuer() -> None:
    store = MemoryTokenStore()
    store.save(TokenKey("https://other.example.com", MCP), Tokens("X", refresh_token="RTX"))
    _, _, opened = drive(new_flow("2026-07-28", store=store), good_routes())
    assert len(opened) == 1  # the other server's refresh token is not sent here
    assert len(store) == 2


def test_authorization_server_choice() -> None:
    routes = good_routes(
        **{
            PRM_PATH: (
                200,
                {**prm_doc(), "authorization_servers": ["https://a.example.com", ISSUER]},
            )
        }
    )
    # the first listed by default: its metadata is asked for first (and is not there)
    drive_error(new_flow("2026-07-28"), routes, ServerMetadataError)
    flow = new_flow("2026-07-28")
    flow.receive_response(200, (), orjson.dumps(routes[PRM_PATH][1]))  # type: ignore[index]
    step = flow.next_step()
    assert isinstance(step, HttpRequest)
    assert step.url == "https://a.example.com/.well-known/oauth-authorization-server"
    _, made, _ = drive(new_flow("2026-07-28", authorization_server=ISSUER), routes)
    assert made[1] == "GET https://auth.example.com/.well-known/oauth-authorization-server/tenant1"
    drive_error(
        new_flow("2026-07-28", authorization_server="https://z.example.com"),
        routes,
        ResourceMetadataError,
    )


def test_usage_errors() -> None:
    with pytest.raises(AuthUsageError, match="no authorization text"):
        new_flow("2024-11-05")
    flow = new_flow("2026-07-28")
    with pytest.raises(AuthUsageError):
        flow.receive_redirect(f"{REDIRECT}?code=C")
    flow.receive_response(200, (), orjson.dumps(prm_doc()))
    flow.receive_response(200, (), orjson.dumps(as_doc()))
    assert isinstance(flow.next_step(), OpenUrl)
    with pytest.raises(AuthUsageError):
        flow.receive_response(200, (), b"{}")


def test_not_json_metadata() -> None:
    drive_error(new_flow("2026-07-28"), {PRM_PATH: (200, "x")}, ResourceMetadataError)
    flow = new_flow("2026-07-28")
    with pytest.raises(ResourceMetadataError, match="not JSON"):
        flow.receive_response(200, (), b"<html>")


STEP_UP = 'Bearer error="insufficient_scope", scope="files:write"'


@pytest.mark.parametrize(
    ("version", "scope"), [("2026-07-28", "files:read files:write"), ("2025-11-25", "files:write")]
)
def test_step_up_skips_refresh_and_widens_scope(version: str, scope: str) -> None:
    store = MemoryTokenStore()
    store.save(TokenKey(ISSUER, MCP), Tokens("OLD", refresh_token="RT0", scope="files:read"))
    calls: list[str] = []

    def tok(req: HttpRequest) -> tuple[int, Any]:
        calls.append(dict(parse_qsl(req.body.decode()))["grant_type"])
        return 200, {"access_token": "AT2", "token_type": "Bearer"}

    flow = new_flow(version, STEP_UP, store=store)
    done, _, opened = drive(flow, good_routes(**{f"{ISSUER}/token": tok}))
    assert calls == ["authorization_code"]  # a refresh cannot widen the scope
    assert dict(parse_qsl(urlsplit(opened[0]).query))["scope"] == scope
    assert done.tokens.scope == scope  # none in the response: the one requested


def test_scope_kept_from_the_response() -> None:
    routes = good_routes(
        **{f"{ISSUER}/token": (200, {"access_token": "A", "token_type": "Bearer", "scope": "x"})}
    )
    done, _, _ = drive(new_flow("2026-07-28", 'Bearer scope="x y"'), routes)
    assert done.tokens.scope == "x"


def test_client_credentials_bound_to_their_issuer() -> None:
    # MCP 2026-07-28, Authorization Server Binding: keyed by issuer, never reused elsewhere
    bound = ClientInfo("c", issuer=ISSUER)
    _, _, opened = drive(new_flow("2026-07-28", client=bound), good_routes())
    assert dict(parse_qsl(urlsplit(opened[0]).query))["client_id"] == "c"
    elsewhere = ClientInfo("c", "s3cret", issuer="https://old-auth.example.com")
    err = drive_error(new_flow("2026-07-28", client=elsewhere), good_routes(), ClientBindingError)
    assert err.step == "server metadata"
    per_issuer = {"https://old-auth.example.com": ClientInfo("old"), ISSUER: ClientInfo("new")}
    _, _, opened = drive(new_flow("2026-07-28", client=per_issuer), good_routes())
    assert dict(parse_qsl(urlsplit(opened[0]).query))["client_id"] == "new"
    none_here = {"https://old-auth.example.com": ClientInfo("old")}
    drive_error(new_flow("2026-07-28", client=none_here), good_routes(), ClientBindingError)


def test_refresh_skipped_when_the_challenge_asks_a_scope_not_granted() -> None:
    # RFC 6749 section 6: a refresh "MUST NOT include any scope not originally granted"
    store = MemoryTokenStore()
    store.save(TokenKey(ISSUER, MCP), Tokens("OLD", refresh_token="RT0", scope="a"))
    calls: list[str] = []

    def tok(req: HttpRequest) -> tuple[int, Any]:
        calls.append(dict(parse_qsl(req.body.decode()))["grant_type"])
        return 200, {"access_token": "AT", "token_type": "Bearer"}

    routes = good_routes(**{f"{ISSUER}/token": tok})
    drive(new_flow("2026-07-28", 'Bearer scope="a b"', store=store), routes)
    assert calls == ["authorization_code"]
    calls.clear()
    store.save(TokenKey(ISSUER, MCP), Tokens("OLD", refresh_token="RT0", scope="a"))
    drive(new_flow("2026-07-28", 'Bearer scope="a"', store=store), routes)
    assert calls == ["refresh_token"]


@pytest.mark.parametrize(
    ("version", "listed", "wanted", "scope"),
    [
        ("2026-07-28", True, True, "x offline_access"),
        ("2026-07-28", False, True, "x"),
        ("2026-07-28", True, False, "x"),
        ("2025-11-25", True, True, "x"),
    ],
)
def test_offline_access(version: str, listed: bool, wanted: bool, scope: str) -> None:
    # MCP 2026-07-28, Refresh Tokens: MAY add offline_access "when the Authorization Server
    # metadata contains it in scopes_supported"
    supported = ["x", "offline_access"] if listed else ["x"]
    asm = "https://auth.example.com/.well-known/oauth-authorization-server/tenant1"
    routes = good_routes(**{asm: (200, as_doc(scopes_supported=supported))})
    flow = new_flow(version, 'Bearer scope="x"', offline_access=wanted)
    _, _, opened = drive(flow, routes)
    assert dict(parse_qsl(urlsplit(opened[0]).query))["scope"] == scope


def test_offline_access_never_sent_alone() -> None:
    asm = "https://auth.example.com/.well-known/oauth-authorization-server/tenant1"
    routes = good_routes(**{asm: (200, as_doc(scopes_supported=["offline_access"]))})
    _, _, opened = drive(new_flow("2026-07-28"), routes)
    assert "scope" not in dict(parse_qsl(urlsplit(opened[0]).query))


def test_step_up_union_with_the_scope_asked_before() -> None:
    # 2026-07-28: "the union of the client's previously requested scope set and the scopes
    # from the current challenge"; the previous request wins over the kept grant
    store = MemoryTokenStore()
    store.save(TokenKey(ISSUER, MCP), Tokens("OLD", scope="granted"))
    flow = new_flow("2026-07-28", STEP_UP, store=store, previous_scope="asked files:write")
    _, _, opened = drive(flow, good_routes())
    assert dict(parse_qsl(urlsplit(opened[0]).query))["scope"] == "asked files:write"
    flow = new_flow("2025-11-25", STEP_UP, store=store, previous_scope="asked")
    _, _, opened = drive(flow, good_routes())
    assert dict(parse_qsl(urlsplit(opened[0]).query))["scope"] == "files:write"


def test_token_types_passed_through() -> None:
    dpop = {"access_token": "AT", "token_type": "DPoP"}
    drive_error(
        new_flow("2026-07-28"), good_routes(**{f"{ISSUER}/token": (200, dpop)}), TokenResponseError
    )
    done, _, _ = drive(
        new_flow("2026-07-28", token_types=("bearer", "dpop")),
        good_routes(**{f"{ISSUER}/token": (200, dpop)}),
    )
    assert done.tokens.token_type == "DPoP"


@pytest.mark.parametrize(("version", "scope"), [("2026-07-28", "a b"), ("2025-11-25", "b")])
def test_reauthorization_keeps_the_scope_asked_before(version: str, scope: str) -> None:
    # 2026-07-28: "When re-authorizing, clients SHOULD include these scopes alongside any
    # previously granted scopes"; a first authorization (no previous_scope) does not
    flow = new_flow(version, 'Bearer scope="b"', previous_scope="a")
    _, _, opened = drive(flow, good_routes())
    assert dict(parse_qsl(urlsplit(opened[0]).query))["scope"] == scope
    _, _, opened = drive(new_flow(version, 'Bearer scope="b"'), good_routes())
    assert dict(parse_qsl(urlsplit(opened[0]).query))["scope"] == "b"
