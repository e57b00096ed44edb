"""OAuthClient (the ClientAuth of the authorization code flow) driven with canned HTTP
answers: headers, which challenges start a flow, the retry limit, step-up scopes,
registration per issuer and the move to another authorization server."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

import orjson
import pytest

from mcp_sansio.auth import (
    AuthFlow,
    Authorized,
    ClientBindingError,
    ClientInfo,
    HttpRequest,
    MemoryTokenStore,
    OpenUrl,
    TokenKey,
    Tokens,
)
from mcp_sansio.auth._client_auth import ClientAuth, Flow
from mcp_sansio.auth._oauth_client import DEFAULT_MAX_STEP_UPS, OAuthClient

MCP = "https://mcp.example.com/mcp"
PRM = "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"
AS1 = "https://as1.example.com"
AS2 = "https://as2.example.com"
REDIRECT = "http://127.0.0.1:5555/cb"

Answer = Callable[[HttpRequest], tuple[int, Any]]


class World:
    """A resource naming one authorization server (switchable), each with DCR."""

    def __init__(self, issuer: str = AS1, **as_extra: Any) -> None:
        self.issuer = issuer
        self.as_extra = as_extra
        self.registered: list[tuple[str, dict[str, Any]]] = []
        self.authorize: list[tuple[str, dict[str, str]]] = []
        self.tokens: list[tuple[str, dict[str, str], dict[str, str]]] = []
        self.count = 0

    def answer(self, req: HttpRequest) -> tuple[int, Any]:
        if req.url == PRM:
            return 200, {"resource": MCP, "authorization_servers": [self.issuer]}
        for issuer in (AS1, AS2):
            if req.url == f"{issuer}/.well-known/oauth-authorization-server":
                return 200, {
                    "issuer": issuer,
                    "authorization_endpoint": f"{issuer}/authorize",
                    "token_endpoint": f"{issuer}/token",
                    "registration_endpoint": f"{issuer}/register",
                    "code_challenge_methods_supported": ["S256"],
                    "token_endpoint_auth_methods_supported": ["client_secret_post"],
                    **self.as_extra,
                }
            if req.url == f"{issuer}/register":
                doc = orjson.loads(req.body)
                self.registered.append((issuer, doc))
                host = urlsplit(issuer).hostname
                return 201, {
                    "client_id": f"{host}-client",
                    "client_secret": f"{host}-secret",
                    "redirect_uris": doc["redirect_uris"],
                    "token_endpoint_auth_method": "client_secret_post",
                }
            if req.url == f"{issuer}/token":
                form = dict(parse_qsl(req.body.decode()))
                self.tokens.append((issuer, form, dict(req.headers)))
                self.count += 1
                return 200, {
                    "access_token": f"{urlsplit(issuer).hostname}-at{self.count}",
                    "token_type": "Bearer",
                    "expires_in": 100,
                    "refresh_token": f"rt{self.count}",
                }
        return 404, {}

    def browser(self, url: str) -> str:
        query = dict(parse_qsl(urlsplit(url).query))
        self.authorize.append((url.split("/authorize")[0], query))
        back = {"code": "c", "state": query["state"]}
        return f"{query['redirect_uri']}?{urlencode(back)}"


def run(auth: ClientAuth, flow: Flow | None, world: World, now: float = 10.0) -> Authorized:
    assert flow is not None
    for _ in range(20):
        step = flow.next_step()
        if isinstance(step, Authorized):
            auth.authorized(step, now=now)
            return step
        if isinstance(step, OpenUrl):
            flow.receive_redirect(world.browser(step.url))
            continue
        status, body = world.answer(step)
        flow.receive_response(status, (), orjson.dumps(body), now=now)
    raise AssertionError("the flow did not end")


def www(value: str) -> list[tuple[str, str]]:
    return [("WWW-Authenticate", value)]


UNAUTHORIZED = www(f'Bearer resource_metadata="{PRM}", scope="a"')


def new_client(**kw: Any) -> OAuthClient:
    kw.setdefault("version", "2026-07-28")
    return OAuthClient(MCP, redirect_uri=REDIRECT, **kw)


def test_is_a_client_auth() -> None:
    auth: ClientAuth = new_client()
    assert auth.headers("POST", MCP, now=0.0) == ()


def test_401_registers_authorizes_and_sends_the_token() -> None:
    world = World()
    auth = new_client(client_name="Test")
    done = run(auth, auth.challenged(401, UNAUTHORIZED, now=1.0), world)
    assert done.key == TokenKey(AS1, MCP)
    assert auth.headers("POST", MCP, now=2.0) == (("Authorization", "Bearer as1.example.com-at1"),)
    # the token is for this resource: never sent to another origin
    assert auth.headers("POST", "https://other.example.com/mcp", now=2.0) == ()
    assert auth.headers("POST", "http://mcp.example.com/mcp", now=2.0) == ()
    assert auth.headers("POST", "https://mcp.example.com:8443/mcp", now=2.0) == ()
    assert auth.headers("POST", "not a url", now=2.0) == ()
    # the same origin written otherwise (RFC 6454: scheme, host, port)
    assert auth.headers("GET", "https://MCP.example.com:443/mcp", now=2.0) != ()
    ((issuer, doc),) = world.registered
    assert issuer == AS1
    assert doc["client_name"] == "Test"
    assert doc["application_type"] == "native"
    assert doc["token_endpoint_auth_method"] == "client_secret_post"
    (_, form, _) = world.tokens[0]
    assert form["client_id"] == "as1.example.com-client"
    assert form["client_secret"] == "as1.example.com-secret"
    # registration kept per issuer: the next flow does not register again
    stored = auth.registrations.load_client(AS1)
    assert stored is not None
    assert stored.issuer == AS1


def test_other_statuses_and_plain_403_are_not_answered() -> None:
    auth = new_client()
    assert auth.challenged(403, www('Bearer error="invalid_token"'), now=0.0) is None
    assert auth.challenged(403, [], now=0.0) is None
    assert auth.challenged(500, UNAUTHORIZED, now=0.0) is None
    assert isinstance(auth.challenged(401, [], now=0.0), AuthFlow)
    # a broken header is read as none: the flow discovers by well-known URIs
    flow = auth.challenged(401, www("Bearer ,,, =broken"), now=0.0)
    assert isinstance(flow, AuthFlow)
    assert flow.challenge is None


STEP_UP = www(f'Bearer error="insufficient_scope", scope="admin", resource_metadata="{PRM}"')


def test_step_up_retry_limit() -> None:
    # the conformance scenario auth/scope-retry-limit allows 3 authorizations in all
    world = World()
    auth = new_client()
    run(auth, auth.challenged(401, UNAUTHORIZED, now=1.0), world)
    flows = 0
    while (flow := auth.challenged(403, STEP_UP, now=2.0)) is not None:
        run(auth, flow, world)
        flows += 1
        assert flows <= 10
    assert flows == DEFAULT_MAX_STEP_UPS == 2
    assert len(world.authorize) == 3
    # another scope set is another operation: its own count
    other = www('Bearer error="insufficient_scope", scope="files:write"')
    assert auth.challenged(403, other, now=3.0) is not None
    auth.reset()
    assert auth.challenged(403, STEP_UP, now=3.0) is not None


def test_max_step_ups_zero() -> None:
    auth = new_client(max_step_ups=0)
    assert auth.challenged(403, STEP_UP, now=0.0) is None
    with pytest.raises(ValueError, match="max_step_ups"):
        new_client(max_step_ups=-1)


@pytest.mark.parametrize(
    ("version", "second"), [("2026-07-28", "a admin"), ("2025-11-25", "admin")]
)
def test_step_up_scope_union_by_version(version: str, second: str) -> None:
    world = World()
    auth = new_client(version=version)
    run(auth, auth.challenged(401, UNAUTHORIZED, now=1.0), world)
    assert auth.scope == "a"
    run(auth, auth.challenged(403, STEP_UP, now=2.0), world)
    assert [q.get("scope") for _, q in world.authorize] == ["a", second]
    # a step-up is never answered by a refresh (it cannot widen the scope)
    assert [f["grant_type"] for _, f, _ in world.tokens] == ["authorization_code"] * 2
    assert auth.scope == second


def test_401_with_insufficient_scope_is_a_step_up() -> None:
    auth = new_client(max_step_ups=1)
    header = www('Bearer error="insufficient_scope", scope="x"')
    assert auth.challenged(401, header, now=0.0) is not None
    assert auth.challenged(401, header, now=0.0) is None


def test_401_refreshes_an_expired_token_without_the_person() -> None:
    world = World()
    auth = new_client()
    run(auth, auth.challenged(401, UNAUTHORIZED, now=1.0), world)
    expired = www(f'Bearer error="invalid_token", resource_metadata="{PRM}"')
    for i in range(5):  # an expired token's 401 never counts toward the limit
        flow = auth.challenged(401, expired, now=1000.0 * (i + 1))
        run(auth, flow, world, now=1000.0 * (i + 1))
    assert len(world.authorize) == 1
    grants = [f["grant_type"] for _, f, _ in world.tokens]
    assert grants == ["authorization_code"] + ["refresh_token"] * 5
    assert auth.headers("GET", MCP, now=0.0) == (("Authorization", "Bearer as1.example.com-at6"),)


def test_fresh_tokens_rejected_again_and_again_stop() -> None:
    world = World()
    auth = new_client()
    run(auth, auth.challenged(401, UNAUTHORIZED, now=1.0), world)
    flows = 0
    while (flow := auth.challenged(401, UNAUTHORIZED, now=2.0)) is not None:
        run(auth, flow, world, now=2.0)
        flows += 1
        assert flows <= 10
    assert flows == DEFAULT_MAX_STEP_UPS


def test_authorization_server_migration() -> None:
    # MCP 2026-07-28, Authorization Server Binding; conformance auth/authorization-server-migration
    world = World()
    auth = new_client()
    run(auth, auth.challenged(401, UNAUTHORIZED, now=1.0), world)
    world.issuer = AS2
    run(auth, auth.challenged(401, UNAUTHORIZED, now=2.0), world)
    assert [issuer for issuer, _ in world.registered] == [AS1, AS2]
    as2_forms = [f for issuer, f, _ in world.tokens if issuer == AS2]
    assert [f["grant_type"] for f in as2_forms] == ["authorization_code"]  # no AS1 refresh token
    assert all(f["client_id"] == "as2.example.com-client" for f in as2_forms)
    assert all(q["client_id"] == "as2.example.com-client" for u, q in world.authorize if u == AS2)
    assert auth.headers("POST", MCP, now=3.0) == (("Authorization", "Bearer as2.example.com-at2"),)
    # and back: AS1's registration is still AS1's, its refresh token too
    world.issuer = AS1
    run(auth, auth.challenged(401, UNAUTHORIZED, now=4.0), world)
    assert len(world.registered) == 2
    assert world.tokens[-1][1]["grant_type"] == "refresh_token"
    assert world.tokens[-1][1]["refresh_token"] == "rt1"


def test_pre_registered_credentials_bound_to_the_old_server_are_refused() -> None:
    world = World()
    auth = new_client(client=ClientInfo("pre", "s3cret", issuer=AS1))
    run(auth, auth.challenged(401, UNAUTHORIZED, now=1.0), world)
    assert world.registered == []
    world.issuer = AS2
    flow = auth.challenged(401, UNAUTHORIZED, now=2.0)
    with pytest.raises(ClientBindingError):
        run(auth, flow, world)
    assert all(q["client_id"] == "pre" for u, q in world.authorize if u == AS1)
    assert not any(issuer == AS2 for issuer, _, _ in world.tokens)


def test_store_shared_and_persisting_registrations() -> None:
    store = MemoryTokenStore()
    world = World()
    first = new_client(store=store)
    run(first, first.challenged(401, UNAUTHORIZED, now=1.0), world)
    # a later run with the same store: no registration, a refresh, no person
    second = new_client(store=store)
    run(second, second.challenged(401, UNAUTHORIZED, now=2.0), world)
    assert len(world.registered) == 1
    assert len(world.authorize) == 1
    assert store.load(TokenKey(AS1, MCP)) == second.authorization.tokens  # type: ignore[union-attr]


def test_offline_access_added_only_where_listed() -> None:
    listed = World(scopes_supported=["a", "offline_access"])
    auth = new_client()
    run(auth, auth.challenged(401, UNAUTHORIZED, now=1.0), listed)
    assert listed.authorize[0][1]["scope"] == "a offline_access"
    unlisted = World(scopes_supported=["a"])
    auth = new_client()
    run(auth, auth.challenged(401, UNAUTHORIZED, now=1.0), unlisted)
    assert unlisted.authorize[0][1]["scope"] == "a"
    # not asked for when the client does not want refresh tokens, nor before 2026-07-28
    for kw in ({"offline_access": False}, {"version": "2025-11-25"}):
        world = World(scopes_supported=["a", "offline_access"])
        auth = new_client(**kw)
        run(auth, auth.challenged(401, UNAUTHORIZED, now=1.0), world)
        assert world.authorize[0][1]["scope"] == "a"


def test_tokens_from_the_store_are_not_assumed() -> None:
    store = MemoryTokenStore()
    store.save(TokenKey(AS1, MCP), Tokens("old"))
    auth = new_client(store=store)
    assert auth.headers("POST", MCP, now=0.0) == ()


def test_bad_arguments_fail_at_construction() -> None:
    from mcp_sansio.auth import AuthUsageError, InsecureEndpointError

    with pytest.raises(AuthUsageError):
        new_client(version="2024-11-05")
    with pytest.raises(InsecureEndpointError):
        OAuthClient(MCP, version="2026-07-28", redirect_uri="http://app.example.com/cb")
    with pytest.raises(AuthUsageError):
        new_client(client_metadata_url="http://app.example.com/client.json")


def test_cimd_client_id_when_supported() -> None:
    url = "https://app.example.com/oauth/client.json"
    world = World(client_id_metadata_document_supported=True)
    auth = new_client(client_metadata_url=url)
    run(auth, auth.challenged(401, UNAUTHORIZED, now=1.0), world)
    assert world.registered == []
    assert world.authorize[0][1]["client_id"] == url
    (_, form, headers) = world.tokens[0]
    assert form["client_id"] == url
    assert "client_secret" not in form
    assert "Authorization" not in headers


def test_token_types_reach_the_flow() -> None:
    auth = new_client(token_types=("bearer", "dpop"))
    flow = auth.challenged(401, UNAUTHORIZED, now=0.0)
    assert isinstance(flow, AuthFlow)
    assert flow._token_types == ("bearer", "dpop")


def test_2025_03_26_defaults_and_registration() -> None:
    base = "https://mcp.example.com"
    made: list[str] = []

    def answer(req: HttpRequest) -> tuple[int, Any]:
        made.append(f"{req.method} {req.url}")
        if req.url == f"{base}/register":
            return 201, {"client_id": "dyn", "client_secret": "s"}
        if req.url == f"{base}/token":
            return 200, {"access_token": "AT", "token_type": "Bearer"}
        return 404, {}

    auth = new_client(version="2025-03-26")
    flow = auth.challenged(401, [], now=0.0)
    assert flow is not None
    while not isinstance(step := flow.next_step(), Authorized):
        if isinstance(step, OpenUrl):
            query = dict(parse_qsl(urlsplit(step.url).query))
            flow.receive_redirect(f"{query['redirect_uri']}?code=c&state={query['state']}")
        else:
            status, body = answer(step)
            flow.receive_response(status, (), orjson.dumps(body), now=0.0)
    auth.authorized(step, now=0.0)
    assert made == [
        f"GET {base}/.well-known/oauth-authorization-server",
        f"POST {base}/register",
        f"POST {base}/token",
    ]
    assert auth.headers("POST", MCP, now=0.0) == (("Authorization", "Bearer AT"),)
