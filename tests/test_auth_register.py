"""Client registration: the RFC 7591 messages and their refusals, Client ID Metadata
Document URLs, and the registration phase of AuthFlow in each version's order."""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qsl, urlsplit

import orjson
import pytest
from test_auth_flow import (
    ISSUER,
    MCP,
    PRM_PATH,
    REDIRECT,
    VERIFIER,
    Answer,
    as_doc,
    drive,
    drive_error,
    prm_doc,
    token_endpoint,
)

from mcp_sansio.auth import (
    AuthFlow,
    AuthUsageError,
    ClientBindingError,
    ClientInfo,
    HttpRequest,
    InsecureEndpointError,
    MemoryTokenStore,
    TokenErrorResponse,
    TokenKey,
    Tokens,
)
from mcp_sansio.auth._errors import RegistrationError, RegistrationErrorResponse
from mcp_sansio.auth._register import (
    application_type_for,
    check_client_metadata_url,
    parse_registration_response,
    registration_auth_method,
    registration_request,
)
from mcp_sansio.auth._store import ClientStore

REGISTER = f"{ISSUER}/register"
ASM = "https://auth.example.com/.well-known/oauth-authorization-server/tenant1"
CIMD = "https://app.example.com/oauth/client.json"


def parse(status: int, doc: Any, method: str = "none", **kw: Any) -> ClientInfo:
    body = doc if isinstance(doc, bytes) else orjson.dumps(doc)
    return parse_registration_response(
        status,
        body,
        issuer=kw.get("issuer", ISSUER),
        redirect_uri=kw.get("redirect_uri", REDIRECT),
        requested_method=method,  # type: ignore[arg-type]
    )


# -- the messages ----------------------------------------------------------------------


def test_registration_request_body() -> None:
    req = registration_request(
        REGISTER,
        redirect_uri=REDIRECT,
        auth_method="none",
        client_name="My client",
        extra={"scope": "a b", "redirect_uris": ["https://evil.example.com/cb"]},
    )
    assert req.method == "POST"
    assert req.url == REGISTER
    assert dict(req.headers)["Content-Type"] == "application/json"
    assert orjson.loads(req.body) == {
        "redirect_uris": [REDIRECT],  # extra cannot replace the client's own fields
        "token_endpoint_auth_method": "none",
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "application_type": "native",
        "client_name": "My client",
        "scope": "a b",
    }
    web = registration_request(
        REGISTER, redirect_uri="https://app.example.com/cb", auth_method="client_secret_basic"
    )
    doc = orjson.loads(web.body)
    assert doc["application_type"] == "web"
    assert "client_name" not in doc
    assert "scope" not in doc
    forced = registration_request(
        REGISTER, redirect_uri=REDIRECT, auth_method="none", application_type="web"
    )
    assert orjson.loads(forced.body)["application_type"] == "web"


@pytest.mark.parametrize(
    ("uri", "kind"),
    [
        ("http://127.0.0.1:3000/cb", "native"),
        ("http://localhost/cb", "native"),
        ("http://[::1]:8080/cb", "native"),
        ("https://app.example.com/cb", "web"),
        ("https://localhost.example.com/cb", "web"),
    ],
)
def test_application_type(uri: str, kind: str) -> None:
    assert application_type_for(uri) == kind


@pytest.mark.parametrize(
    ("supported", "method"),
    [
        (None, "client_secret_basic"),  # RFC 8414: the default when omitted
        (("none", "client_secret_basic"), "none"),
        (("client_secret_post", "client_secret_basic"), "client_secret_basic"),
        (("client_secret_post",), "client_secret_post"),
        (("private_key_jwt",), "client_secret_basic"),
    ],
)
def test_registration_auth_method(supported: tuple[str, ...] | None, method: str) -> None:
    assert registration_auth_method(supported) == method


def test_registration_response_success() -> None:
    client = parse(
        201,
        {"client_id": "c1", "client_secret": "s3cret", "client_secret_expires_at": 0},
        "client_secret_basic",
    )
    assert client == ClientInfo(
        "c1", "s3cret", auth_method="client_secret_basic", issuer=ISSUER, expires_at=0
    )
    assert "s3cret" not in repr(client)
    # the server's method replaces the one asked for (RFC 7591 3.2.1)
    swapped = parse(
        201,
        {
            "client_id": "c2",
            "client_secret": "x",
            "token_endpoint_auth_method": "client_secret_post",
        },
    )
    assert swapped.auth_method == "client_secret_post"
    public = parse(201, {"client_id": "c3", "redirect_uris": [REDIRECT, "http://other/cb"]})
    assert public.auth_method == "none"
    assert public.client_secret is None


@pytest.mark.parametrize(
    ("status", "doc", "method", "why"),
    [
        (200, {"client_id": "c"}, "none", "201 Created"),
        (500, b"<html>", "none", "without an error object"),
        (201, b"not json", "none", "not a JSON object"),
        (201, ["c"], "none", "not a JSON object"),
        (201, {"client_secret": "s"}, "none", "no client_id"),
        (201, {"client_id": ""}, "none", "no client_id"),
        (201, {"client_id": 7}, "none", "no client_id"),
        (201, {"client_id": "c", "client_secret": 5}, "none", "client_secret"),
        (201, {"client_id": "c", "client_secret_expires_at": -1}, "none", "expires_at"),
        (201, {"client_id": "c", "client_secret_expires_at": "0"}, "none", "expires_at"),
        (
            201,
            {"client_id": "c", "token_endpoint_auth_method": "private_key_jwt"},
            "none",
            "not one",
        ),
        (201, {"client_id": "c"}, "client_secret_basic", "no client_secret"),
        (
            201,
            {"client_id": "c", "redirect_uris": ["http://127.0.0.1:1/x"]},
            "none",
            "redirect_uris",
        ),
        (201, {"client_id": "c", "redirect_uris": REDIRECT}, "none", "redirect_uris"),
    ],
)
def test_registration_response_refusals(status: int, doc: Any, method: str, why: str) -> None:
    with pytest.raises(RegistrationError, match=why) as info:
        parse(status, doc, method)
    assert type(info.value) is RegistrationError
    assert info.value.step == "registration"


def test_registration_error_response() -> None:
    # RFC 7591 3.2.2
    with pytest.raises(RegistrationErrorResponse) as info:
        parse(400, {"error": "invalid_redirect_uri", "error_description": "loopback\nrefused"})
    err = info.value
    assert (err.status, err.error, err.description) == (
        400,
        "invalid_redirect_uri",
        "loopback?refused",
    )
    assert "invalid_redirect_uri" in str(err)
    with pytest.raises(RegistrationErrorResponse) as info:
        parse(403, {"error": "unapproved_software_statement", "error_description": 3})
    assert info.value.description is None


def test_registration_response_size_bound() -> None:
    with pytest.raises(RegistrationError, match="over"):
        parse(201, b" " * (1 << 20) + b"{}")


@pytest.mark.parametrize(
    "url",
    [
        "http://app.example.com/client.json",
        "https://app.example.com",
        "https://app.example.com/",
        "https://app.example.com/c.json#x",
        "https://user@app.example.com/c.json",
        "app.example.com/c.json",
        "https://[broken/c.json",
    ],
)
def test_client_metadata_url_refusals(url: str) -> None:
    with pytest.raises(AuthUsageError):
        check_client_metadata_url(url)


def test_client_metadata_url_accepted() -> None:
    assert check_client_metadata_url(CIMD) == CIMD
    assert check_client_metadata_url("https://app.example.com:8443/c?v=1") == (
        "https://app.example.com:8443/c?v=1"
    )


# -- the registration phase ----------------------------------------------------------------


def registrar(seen: list[dict[str, Any]], answer: tuple[int, Any] | None = None) -> Answer:
    def handle(req: HttpRequest) -> tuple[int, Any]:
        assert req.method == "POST"
        seen.append(orjson.loads(req.body))
        return answer or (201, {"client_id": "dyn", "redirect_uris": [REDIRECT]})

    return handle


def routes(seen: list[dict[str, Any]], **doc: Any) -> dict[str, Answer]:
    doc.setdefault("token_endpoint_auth_methods_supported", ["none"])
    return {
        PRM_PATH: (200, prm_doc()),
        ASM: (200, as_doc(registration_endpoint=REGISTER, **doc)),
        REGISTER: registrar(seen),
        f"{ISSUER}/token": token_endpoint({"client_id": "dyn"}),
    }


def flow(version: str = "2026-07-28", **kw: Any) -> AuthFlow:
    return AuthFlow(MCP, version=version, redirect_uri=REDIRECT, code_verifier=VERIFIER, **kw)


def test_dynamic_registration_then_authorize() -> None:
    seen: list[dict[str, Any]] = []
    f = flow(client_name="Test client")
    done, made, opened = drive(f, routes(seen, token_endpoint_auth_methods_supported=["none"]))
    assert made == [f"GET {PRM_PATH}", f"GET {ASM}", f"POST {REGISTER}", f"POST {ISSUER}/token"]
    assert seen[0]["token_endpoint_auth_method"] == "none"
    assert seen[0]["client_name"] == "Test client"
    assert seen[0]["application_type"] == "native"
    assert dict(parse_qsl(urlsplit(opened[0]).query))["client_id"] == "dyn"
    assert f.client_source == "registered"
    assert f.registrations.load_client(ISSUER) == ClientInfo(
        "dyn", auth_method="none", issuer=ISSUER
    )
    assert done.key == TokenKey(ISSUER, MCP)


def test_registration_phase_name_and_failure() -> None:
    seen: list[dict[str, Any]] = []
    r = routes(seen)
    r[REGISTER] = registrar(seen, (400, {"error": "invalid_client_metadata"}))
    f = flow()
    f.receive_response(200, (), orjson.dumps(prm_doc()))
    f.receive_response(200, (), orjson.dumps(as_doc(registration_endpoint=REGISTER)))
    assert f.phase == "registration"
    assert isinstance(f.next_step(), HttpRequest)
    failed = flow()
    err = drive_error(failed, r, RegistrationErrorResponse)
    assert err.step == "registration"
    assert isinstance(err, RegistrationErrorResponse)
    assert err.error == "invalid_client_metadata"
    assert failed.registrations.load_client(ISSUER) is None


def test_stored_registration_is_used() -> None:
    store = MemoryTokenStore()
    store.save_client(ISSUER, ClientInfo("kept", auth_method="none", issuer=ISSUER))
    seen: list[dict[str, Any]] = []
    r = routes(seen)
    r[f"{ISSUER}/token"] = token_endpoint({"client_id": "kept"})
    f = flow(store=store)
    drive(f, r)
    assert seen == []
    assert f.client_source == "stored"


def test_stored_registration_of_another_issuer_is_refused() -> None:
    store = MemoryTokenStore()
    store.save_client(ISSUER, ClientInfo("kept", issuer="https://elsewhere.example.com"))
    drive_error(flow(store=store), routes([]), ClientBindingError)


def test_pre_registered_first_then_cimd_then_dcr() -> None:
    seen: list[dict[str, Any]] = []
    r = routes(seen, client_id_metadata_document_supported=True)
    r[f"{ISSUER}/token"] = token_endpoint({})
    # 1. pre-registered, even where the server takes metadata documents
    f = flow(client=ClientInfo("pre"), client_metadata_url=CIMD)
    _, _, opened = drive(f, r)
    assert dict(parse_qsl(urlsplit(opened[0]).query))["client_id"] == "pre"
    # 2. the metadata document's URL
    f = flow(client_metadata_url=CIMD)
    _, _, opened = drive(f, r)
    assert dict(parse_qsl(urlsplit(opened[0]).query))["client_id"] == CIMD
    assert f.client_source == "metadata document"
    assert seen == []
    # a per-issuer mapping without this issuer falls through to the next way
    f = flow(client={"https://other.example.com": ClientInfo("o")}, client_metadata_url=CIMD)
    drive(f, r)
    assert f.client_source == "metadata document"
    # 3. DCR where the server does not take metadata documents
    f = flow(client_metadata_url=CIMD)
    drive(f, routes(seen))
    assert f.client_source == "registered"
    assert len(seen) == 1


def test_cimd_not_before_2025_11_25() -> None:
    seen: list[dict[str, Any]] = []
    f = flow("2025-06-18", client_metadata_url=CIMD)
    drive(f, routes(seen, client_id_metadata_document_supported=True))
    assert f.client_source == "registered"


def test_no_way_to_a_client() -> None:
    r = routes([])
    r[ASM] = (200, as_doc())
    err = drive_error(flow(), r, ClientBindingError)
    assert "entered" in err.reason
    err = drive_error(flow(client_metadata_url=CIMD), r, ClientBindingError)
    assert "client_id_metadata_document_supported" in err.reason


def test_insecure_registration_endpoint() -> None:
    r = routes([])
    r[ASM] = (200, as_doc(registration_endpoint="http://auth.example.com/register"))
    drive_error(flow(), r, InsecureEndpointError)


def test_2025_03_26_default_register_endpoint() -> None:
    seen: list[dict[str, Any]] = []
    base = "https://mcp.example.com"
    r: dict[str, Answer] = {
        f"{base}/register": registrar(seen, (201, {"client_id": "dyn", "client_secret": "s"})),
        f"{base}/token": token_endpoint({}),
    }
    f = flow("2025-03-26")
    _, made, _ = drive(f, r)
    assert made[1] == f"POST {base}/register"
    # no metadata: RFC 8414's default method, client_secret_basic
    assert seen[0]["token_endpoint_auth_method"] == "client_secret_basic"
    assert f.client == ClientInfo("dyn", "s", auth_method="client_secret_basic", issuer=base)


def test_invalid_client_forgets_the_registration() -> None:
    store = MemoryTokenStore()
    r = routes([])
    r[f"{ISSUER}/token"] = (401, {"error": "invalid_client"})
    drive_error(flow(store=store), r, TokenErrorResponse)
    assert store.load_client(ISSUER) is None
    # a pre-registered client is the user's: nothing is forgotten (there is nothing kept)
    store.save_client(ISSUER, ClientInfo("kept", issuer=ISSUER, auth_method="none"))
    drive_error(flow(store=store), r, TokenErrorResponse)
    assert store.load_client(ISSUER) is None
    # a pre-registered client is the user's: it is not put in the store at all
    f = flow(store=store, client=ClientInfo("pre"))
    drive_error(f, r, TokenErrorResponse)
    assert f.client_source == "pre-registered"
    assert store.load_client(ISSUER) is None


def test_new_registration_does_not_use_an_old_refresh_token() -> None:
    store = MemoryTokenStore()
    store.save(TokenKey(ISSUER, MCP), Tokens("OLD", refresh_token="RT-of-another-client"))
    seen: list[dict[str, Any]] = []
    r = routes(seen)
    r[f"{ISSUER}/token"] = token_endpoint({"grant_type": "authorization_code"})
    _, _, opened = drive(flow(store=store), r)
    assert len(opened) == 1


def test_registrations_apart_from_tokens() -> None:
    class TokensOnly:
        def __init__(self) -> None:
            self.inner = MemoryTokenStore()

        def load(self, key: TokenKey) -> Tokens | None:
            return self.inner.load(key)

        def save(self, key: TokenKey, tokens: Tokens) -> None:
            self.inner.save(key, tokens)

        def delete(self, key: TokenKey) -> None:
            self.inner.delete(key)

    assert not isinstance(TokensOnly(), ClientStore)
    assert isinstance(MemoryTokenStore(), ClientStore)
    f = flow(store=TokensOnly())
    assert isinstance(f.registrations, MemoryTokenStore)
    own = MemoryTokenStore()
    f = flow(store=TokensOnly(), registrations=own)
    drive(f, routes([]))
    assert own.load_client(ISSUER) is not None
